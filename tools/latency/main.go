//go:build unix

// Command latency measures what an editor user waits for from pi-lsp, as a process an
// editor spawns: the time from spawn to the first page of the tree in a project with
// hundreds of sessions, the delay between a line another process appends and the
// editor's refreshed view, and the memory of a server that follows many sessions for a
// long time. Each figure comes with its anchor from the same run where one exists (the
// spawn of the same binary doing nothing). It prints one JSON object; scripts/bench-budget.sh
// turns runs of it into the table of docs/BENCHMARKS.md.
//
// It is a benchmark, not a test: it asserts nothing, and its figures move with the load
// of the machine. Everything it writes lives in a temp dir; the server it spawns has
// HOME, the XDG dirs and PI_CODING_AGENT_DIR there and is killed with its process group.
//
//	go run ./tools/latency -bin bin/pi-lsp [-sessions 500] [-big-mb 100] [-runs 5]
//	go run ./tools/latency -table test-artifacts/budget
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func main() {
	bin := flag.String("bin", "bin/pi-lsp", "the pi-lsp binary to measure")
	nSessions := flag.Int("sessions", 500, "sessions in the project's folder")
	bigMB := flag.Int("big-mb", 100, "size of the newest (current) session, in MB")
	runs := flag.Int("runs", 5, "spawns measured (the median and best are reported)")
	appends := flag.Int("appends", 100, "lines appended to the big session for the follow figure")
	followed := flag.Int("followed", 20, "sessions followed for the memory figure")
	followEntries := flag.Int("follow-entries", 10000, "entries appended over the followed sessions")
	table := flag.String("table", "", "print the markdown table of the results in this dir (scripts/bench-budget.sh) and exit")
	flag.Parse()
	if *table != "" {
		if err := writeTable(os.Stdout, *table); err != nil {
			fmt.Fprintln(os.Stderr, "latency:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*bin, *nSessions, *bigMB, *runs, *appends, *followed, *followEntries); err != nil {
		fmt.Fprintln(os.Stderr, "latency:", err)
		os.Exit(1)
	}
}

type result struct {
	Sessions       int     `json:"sessions"`
	BigBytes       int64   `json:"bigBytes"`
	SpawnOnlyMs    float64 `json:"spawnOnlyMs"`    // anchor: spawn + exit of `pi-lsp version`
	InitializeMs   stats   `json:"initializeMs"`   // spawn → initialize answered
	FirstTreeMs    stats   `json:"firstTreeMs"`    // spawn → first pi/tree page (500 nodes)
	EmptyFirstTree stats   `json:"emptyFirstTree"` // the same in a project with no session
	ChangedMs      stats   `json:"changedMs"`      // append → pi/sessionChanged
	RefreshedMs    stats   `json:"refreshedMs"`    // append → refreshed tree page answered
	Followed       int     `json:"followed"`       // sessions followed for Memory
	Memory         []memPt `json:"memory"`         // following many sessions
}

type stats struct {
	N    int     `json:"n"`
	Best float64 `json:"best"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
}

func summarize(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	at := func(q float64) float64 {
		i := int(q*float64(len(s)-1) + 0.5)
		return s[i]
	}
	return stats{N: len(s), Best: s[0], P50: at(0.5), P99: at(0.99)}
}

type memPt struct {
	Appended   int `json:"appended"`
	RSSKB      int `json:"rssKB"`
	Threads    int `json:"threads"`
	FDs        int `json:"fds"`
	Goroutines int `json:"goroutines,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func run(bin string, nSessions, bigMB, runs, appends, followed, followEntries int) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "pi-lsp-latency")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	ws := newWorkspace(root, "project")
	empty := newWorkspace(root, "empty")
	for _, w := range []workspace{ws, empty} {
		if err := os.MkdirAll(w.sessions, 0o755); err != nil {
			return err
		}
		if err := os.MkdirAll(w.cwd, 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "latency: writing %d sessions (the newest %d MB)\n", nSessions, bigMB)
	var small []string
	for i := 0; i < nSessions-1; i++ {
		p, err := ws.write(int64(1000+i), 60, time.Now().Add(-time.Duration(nSessions-i)*time.Minute))
		if err != nil {
			return err
		}
		small = append(small, p)
	}
	// About 1.65 KB an entry with the generator's defaults.
	big, err := ws.write(7, bigMB*1000*1000/1650, time.Now())
	if err != nil {
		return err
	}
	st, _ := os.Stat(big)
	res := result{Sessions: nSessions, BigBytes: st.Size()}
	readAll(big) // the page cache, as for an editor opening a project it worked in

	// Anchor: the same binary spawned to print its version.
	var anchor []float64
	for range runs {
		t0 := time.Now()
		cmd := exec.Command(bin, "version")
		cmd.Env = ws.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s version: %v: %s", bin, err, out)
		}
		anchor = append(anchor, ms(time.Since(t0)))
	}
	res.SpawnOnlyMs = summarize(anchor).P50

	var inits, trees, emptyTrees []float64
	for range runs {
		i, t, err := firstTree(bin, ws)
		if err != nil {
			return err
		}
		inits, trees = append(inits, i), append(trees, t)
		_, t, err = firstTree(bin, empty)
		if err != nil {
			return err
		}
		emptyTrees = append(emptyTrees, t)
	}
	res.InitializeMs, res.FirstTreeMs, res.EmptyFirstTree = summarize(inits), summarize(trees), summarize(emptyTrees)

	changed, refreshed, err := follow(bin, ws, big, appends)
	if err != nil {
		return err
	}
	res.ChangedMs, res.RefreshedMs = summarize(changed), summarize(refreshed)

	if followed > len(small) {
		followed = len(small)
	}
	res.Followed = followed
	res.Memory, err = memory(bin, ws, small[len(small)-followed:], followEntries)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func readAll(path string) {
	f, err := os.Open(path)
	if err == nil {
		_, _ = io.Copy(io.Discard, f)
		f.Close()
	}
}

// workspace is a project dir and its Pi sessions folder, with a private home.
type workspace struct {
	home, agent, cwd, sessions string
}

func newWorkspace(root, name string) workspace {
	home := filepath.Join(root, name+"-home")
	agent := filepath.Join(home, ".pi", "agent")
	cwd := filepath.Join(root, name)
	return workspace{home: home, agent: agent, cwd: cwd, sessions: session.SessionDir(agent, cwd)}
}

func (w workspace) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "PI_CODING_AGENT_DIR=" + w.agent,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"), "XDG_STATE_HOME=" + filepath.Join(w.home, ".state"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(w.home, ".data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(w.home, ".run"), "TMPDIR=" + os.TempDir(),
	}
}

// write generates a session of about n entries with its file's times set to mtime.
func (w workspace) write(seed int64, n int, mtime time.Time) (string, error) {
	p := filepath.Join(w.sessions, fmt.Sprintf("2026-01-01T00-00-%06d-000Z_%016x.jsonl", seed, seed))
	f, err := os.Create(p)
	if err != nil {
		return "", err
	}
	if err := benchgen.Write(f, benchgen.Options{Entries: n, Seed: seed}); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return p, os.Chtimes(p, mtime, mtime)
}

// server is a spawned pi-lsp serve --stdio with a minimal client: responses matched by
// id, notifications timestamped as they arrive.
type server struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	mu    sync.Mutex
	next  int
	wait  map[int]chan json.RawMessage
	notes chan note
	done  chan struct{}
}

type note struct {
	method string
	params json.RawMessage
	at     time.Time
}

func spawn(bin string, w workspace) (*server, error) {
	cmd := exec.Command(bin, "serve", "--stdio")
	cmd.Env = w.env()
	cmd.Dir = w.cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, in: in, wait: map[int]chan json.RawMessage{}, notes: make(chan note, 1<<16), done: make(chan struct{})}
	go s.read(bufio.NewReaderSize(out, 1<<20))
	return s, nil
}

func (s *server) read(r *bufio.Reader) {
	defer close(s.done)
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		now := time.Now()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request of the server: answer null
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, m.ID))
		case m.Method != "":
			select {
			case s.notes <- note{m.Method, m.Params, now}:
			default:
			}
		default:
			id, _ := strconv.Atoi(string(m.ID))
			s.mu.Lock()
			ch := s.wait[id]
			delete(s.wait, id)
			s.mu.Unlock()
			if ch != nil {
				if len(m.Error) > 0 && string(m.Error) != "null" {
					ch <- append(json.RawMessage(`{"error":`), append(m.Error, '}')...)
				} else {
					ch <- m.Result
				}
			}
		}
	}
}

func (s *server) send(body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.in, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

func (s *server) call(method string, params any) (json.RawMessage, error) {
	p, _ := json.Marshal(params)
	s.mu.Lock()
	s.next++
	id := s.next
	ch := make(chan json.RawMessage, 1)
	s.wait[id] = ch
	s.mu.Unlock()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	select {
	case r := <-ch:
		if bytes.HasPrefix(r, []byte(`{"error":`)) {
			return nil, fmt.Errorf("%s: %s", method, r)
		}
		return r, nil
	case <-s.done:
		return nil, fmt.Errorf("%s: the server exited", method)
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("%s: no answer in 2 minutes", method)
	}
}

func (s *server) initialize(w workspace) error {
	uri := "file://" + w.cwd
	_, err := s.call("initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": uri,
		"workspaceFolders": []any{map[string]any{"uri": uri, "name": filepath.Base(w.cwd)}},
		"capabilities":     map[string]any{"window": map[string]any{"workDoneProgress": true}},
	})
	if err != nil {
		return err
	}
	s.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	return nil
}

// stop shuts the server down, and kills its group if it does not exit in time.
func (s *server) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		_, _ = s.call("shutdown", nil)
		s.send(`{"jsonrpc":"2.0","method":"exit"}`)
		_ = s.in.Close()
	}()
	select {
	case <-s.done:
	case <-ctx.Done():
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
}

type flatPage struct {
	Session string `json:"session"`
	Total   int    `json:"total"`
	Nodes   []struct {
		ID string `json:"id"`
	} `json:"nodes"`
}

// firstTree spawns a server in w and times initialize and the first page of the tree.
func firstTree(bin string, w workspace) (initMs, treeMs float64, err error) {
	t0 := time.Now()
	s, err := spawn(bin, w)
	if err != nil {
		return 0, 0, err
	}
	defer s.stop()
	if err := s.initialize(w); err != nil {
		return 0, 0, err
	}
	t1 := time.Now()
	raw, err := s.call("pi/tree", map[string]any{"flat": true, "offset": 0, "limit": 500})
	if err != nil && !strings.Contains(err.Error(), "noSession") {
		return 0, 0, err
	}
	_ = raw
	return ms(t1.Sub(t0)), ms(time.Since(t0)), nil
}

// lastID is the id of the last entry of a session file.
func lastID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	b = bytes.TrimRight(b, "\n")
	line := b[bytes.LastIndexByte(b, '\n')+1:]
	var e struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return "", fmt.Errorf("%s: last line: %w", path, err)
	}
	return e.ID, nil
}

// appendUser appends one user message after parent, as another process (pi) would.
func appendUser(path, parent string, n int) (string, error) {
	id := fmt.Sprintf("%08x", 0xa0000000+n)
	now := time.Now().UTC()
	line := fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":%q,"message":{"role":"user","content":[{"type":"text","text":"appended line %d"}],"timestamp":%d}}`+"\n",
		id, parent, now.Format("2006-01-02T15:04:05.000Z"), n, now.UnixMilli())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return id, err
}

// follow appends lines to the big session and times, for each, the pi/sessionChanged
// that reports it and the refreshed last page of the tree.
func follow(bin string, w workspace, big string, appends int) (changed, refreshed []float64, err error) {
	s, err := spawn(bin, w)
	if err != nil {
		return nil, nil, err
	}
	defer s.stop()
	if err := s.initialize(w); err != nil {
		return nil, nil, err
	}
	if _, err := s.call("pi/tree", map[string]any{"session": big, "flat": true, "offset": 0, "limit": 500}); err != nil {
		return nil, nil, err
	}
	parent, err := lastID(big)
	if err != nil {
		return nil, nil, err
	}
	drain(s, 300*time.Millisecond)
	prev := -1 // entries of the last notification counted
	for i := range appends {
		t0 := time.Now()
		if parent, err = appendUser(big, parent, i); err != nil {
			return nil, nil, err
		}
		var total int
		deadline := time.After(10 * time.Second)
	wait:
		for {
			select {
			case n := <-s.notes:
				if n.method != "pi/sessionChanged" {
					continue
				}
				var p struct {
					Session string `json:"session"`
					Entries int    `json:"entries"`
				}
				// A late notification of the previous append (a loaded machine delays
				// it past the drain) counts no more entries than that one did.
				if json.Unmarshal(n.params, &p) == nil && p.Session == big && p.Entries > prev {
					changed = append(changed, ms(n.at.Sub(t0)))
					total, prev = p.Entries, p.Entries
					break wait
				}
			case <-deadline:
				return nil, nil, fmt.Errorf("append %d: no pi/sessionChanged in 10 s", i)
			}
		}
		raw, err := s.call("pi/tree", map[string]any{"session": big, "flat": true, "offset": max(0, total-500), "limit": 500})
		if err != nil {
			return nil, nil, err
		}
		refreshed = append(refreshed, ms(time.Since(t0)))
		var page flatPage
		if json.Unmarshal(raw, &page) != nil || len(page.Nodes) == 0 || page.Nodes[len(page.Nodes)-1].ID != parent {
			return nil, nil, fmt.Errorf("append %d: the refreshed page does not end with the appended entry", i)
		}
		// Past the server's debounce (100 ms): each append is an isolated one, which the
		// server passes on at once; a burst of lines is coalesced by design.
		time.Sleep(120 * time.Millisecond)
		drain(s, 0)
	}
	return changed, refreshed, nil
}

func drain(s *server, d time.Duration) {
	deadline := time.After(d)
	for {
		select {
		case <-s.notes:
		case <-deadline:
			return
		}
		if d == 0 {
			select {
			case <-s.notes:
				continue
			default:
				return
			}
		}
	}
}

// memory has the server follow sessions (one tree request each, so it holds their
// indexes), then appends entries over them round robin, and samples the process.
func memory(bin string, w workspace, paths []string, entries int) ([]memPt, error) {
	s, err := spawn(bin, w)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	if err := s.initialize(w); err != nil {
		return nil, err
	}
	parents := make([]string, len(paths))
	for i, p := range paths {
		if _, err := s.call("pi/tree", map[string]any{"session": p, "flat": true, "offset": 0, "limit": 500}); err != nil {
			return nil, err
		}
		if parents[i], err = lastID(p); err != nil {
			return nil, err
		}
	}
	pid := s.cmd.Process.Pid
	var pts []memPt
	sample := func(n int) {
		drain(s, 0)
		pts = append(pts, procSample(pid, n))
	}
	sample(0)
	step := max(entries/10, 1)
	for n := 1; n <= entries; n++ {
		i := n % len(paths)
		if parents[i], err = appendUser(paths[i], parents[i], 1_000_000+n); err != nil {
			return nil, err
		}
		if n%len(paths) == 0 {
			time.Sleep(2 * time.Millisecond) // a burst of every session, then a breath
			drain(s, 0)
		}
		if n%step == 0 {
			time.Sleep(500 * time.Millisecond) // let the notifications of the burst settle
			sample(n)
		}
	}
	// A last look at every session: each answer must know every line appended to it.
	for i, p := range paths {
		raw, err := s.call("pi/tree", map[string]any{"session": p, "flat": true, "offset": 0, "limit": 1})
		if err != nil {
			return nil, err
		}
		var page flatPage
		_ = json.Unmarshal(raw, &page)
		want := 0
		for n := 1; n <= entries; n++ {
			if n%len(paths) == i {
				want++
			}
		}
		if page.Total < want {
			return nil, fmt.Errorf("%s: %d entries after %d appends", p, page.Total, want)
		}
	}
	return pts, nil
}

// procSample reads the resident set, threads and open descriptors of a process.
func procSample(pid, appended int) memPt {
	pt := memPt{Appended: appended}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "VmRSS:":
				pt.RSSKB, _ = strconv.Atoi(f[1])
			case "Threads:":
				pt.Threads, _ = strconv.Atoi(f[1])
			}
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		pt.FDs = len(ents)
	}
	return pt
}
