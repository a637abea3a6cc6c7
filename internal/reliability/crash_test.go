package reliability

// Crash safety: a process killed with SIGKILL at random points while it appends
// (session.Append) or compacts (compaction.Run) leaves a file that loads in pi-lsp and
// in real Pi, holds every entry whose write was acknowledged, and shows no entry that
// was not fully written (a torn tail is skipped, and stays skipped once later appends
// start a fresh line after it).
//
// The victim is this test binary re-executed on a helper test (TestHelperCrash*), in
// its own process group, killed with the group. It acknowledges on stdout after each
// call returns; the parent kills it at random moments and checks the file after each
// kill. PI_LSP_CRASH_SEED fixes the random schedule (the seed is logged).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

func crashSeed(t *testing.T) int64 {
	seed := time.Now().UnixNano()
	if s := os.Getenv("PI_LSP_CRASH_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	t.Logf("PI_LSP_CRASH_SEED=%d", seed)
	return seed
}

// entrySize is the text size of the append with sequence number seq: mostly small,
// one in 25 between 128 KB and 1 MB so a kill can land inside its write.
func entrySize(seed int64, seq int) int {
	r := rand.New(rand.NewSource(seed*1_000_003 + int64(seq)))
	if r.Intn(25) == 0 {
		return 128<<10 + r.Intn(7<<17)
	}
	return 100 + r.Intn(4000)
}

// hugeEntry is the size of the entry the parent kills during its write.
const hugeEntry = 8 << 20

// entryText is "seq=N size=S " padded to exactly S bytes with JSON-neutral letters.
func entryText(seq, size int) string {
	prefix := fmt.Sprintf("seq=%d size=%d ", seq, size)
	var b strings.Builder
	b.Grow(size)
	b.WriteString(prefix)
	for i := 0; b.Len() < size; i++ {
		b.WriteByte("abcdefghijklmnopqrstuvwxyz"[i%26])
	}
	return b.String()
}

// parseEntryText checks a text written by entryText and returns its sequence number.
func parseEntryText(text string) (int, bool) {
	var seq, size int
	if _, err := fmt.Sscanf(text, "seq=%d size=%d ", &seq, &size); err != nil {
		return 0, false
	}
	return seq, len(text) == size
}

// TestHelperCrashAppender is the victim of TestCrashDuringAppends: it appends entries
// seq = FROM..TO to the session, printing "begin SEQ SIZE" before and "ack SEQ ID"
// after each session.Append returns.
func TestHelperCrashAppender(t *testing.T) {
	path := os.Getenv("PI_LSP_CRASH_APPEND")
	if path == "" {
		t.Skip("victim process of TestCrashDuringAppends only")
	}
	from, _ := strconv.Atoi(os.Getenv("PI_LSP_CRASH_FROM"))
	to, _ := strconv.Atoi(os.Getenv("PI_LSP_CRASH_TO"))
	seed, _ := strconv.ParseInt(os.Getenv("PI_LSP_CRASH_SEED_VICTIM"), 10, 64)
	huge, _ := strconv.Atoi(os.Getenv("PI_LSP_CRASH_HUGE"))
	f, err := session.Load(path)
	if err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(3)
	}
	ix := session.NewIndex(f)
	taken := sessiontest.Taken(ix)
	leaf := ix.LeafID()
	fmt.Printf("ready %d\n", len(f.Entries))
	for seq := from; seq <= to; seq++ {
		size := entrySize(seed, seq)
		if seq == huge {
			size = hugeEntry
		}
		msg, _ := json.Marshal(map[string]any{
			"role":      "user",
			"content":   []any{map[string]any{"type": "text", "text": entryText(seq, size)}},
			"timestamp": time.Now().UnixMilli(),
		})
		fmt.Printf("begin %d %d\n", seq, size)
		out, err := session.Append(path, taken, []session.NewEntry{{
			Type: session.TypeMessage, ParentID: leaf,
			Fields: []session.Field{{Key: "message", Value: json.RawMessage(msg)}},
		}})
		if err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(3)
		}
		leaf = out[0].ID
		fmt.Printf("ack %d %s\n", seq, leaf)
	}
	os.Exit(0)
}

// crashState is what the parent learned from a file after a kill.
type crashState struct {
	file    *session.File
	seqs    map[int]string // seq → entry id, for every visible entry
	maxSeq  int
	torn    bool
	skipped int
}

// checkAppendFile loads the file and checks every visible entry is a whole entry the
// victim wrote and every acknowledged one is there.
func checkAppendFile(t *testing.T, path string, acked map[int]string) crashState {
	t.Helper()
	f, err := session.Load(path)
	if err != nil {
		t.Fatalf("pi-lsp cannot load the file after a kill: %v", err)
	}
	st := crashState{file: f, seqs: map[int]string{}, torn: f.Torn, skipped: len(f.Skipped)}
	for _, e := range f.Entries {
		if !json.Valid(e.Raw()) {
			t.Fatalf("visible entry %s is not valid JSON", e.ID)
		}
		m, err := e.Message()
		if err != nil {
			t.Fatalf("visible entry %s has no message: %v", e.ID, err)
		}
		seq, whole := parseEntryText(m.Text(""))
		if !whole {
			t.Fatalf("visible entry %s holds a partial text (%d bytes)", e.ID, len(m.Text("")))
		}
		if prev, dup := st.seqs[seq]; dup {
			t.Fatalf("seq %d visible twice (%s, %s)", seq, prev, e.ID)
		}
		st.seqs[seq] = e.ID
		st.maxSeq = max(st.maxSeq, seq)
	}
	for seq, id := range acked {
		if got, ok := st.seqs[seq]; !ok || got != id {
			t.Fatalf("acknowledged append seq=%d (%s) is missing after a kill (found %q)", seq, id, got)
		}
	}
	return st
}

func TestCrashDuringAppends(t *testing.T) {
	const total, kills = 1000, 30
	seed := crashSeed(t)
	r := rand.New(rand.NewSource(seed))
	isolate.Setup(t)
	o := optionalOracle(t)
	dir := t.TempDir()
	path, _, err := session.Create(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	// 30 distinct kill points among the 1,000 appends.
	perm := r.Perm(total - 2)
	killAt := make([]int, kills)
	for i := range killAt {
		killAt[i] = perm[i] + 2
	}
	sort.Ints(killAt)
	live, err := session.OpenLive(path)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[int]string{}
	var (
		killed, tornSeen, unacked, runs int
		inWriteKills                    int
		lastTorn                        int64 = -1
		killDelay                       []time.Duration
		pilLoads                        int
	)
	from, next := 1, 0
	deadline := time.Now().Add(8 * time.Minute)
	for from <= total {
		if time.Now().After(deadline) {
			t.Fatalf("crash test ran out of time at seq %d", from)
		}
		runs++
		target := -1
		if next < len(killAt) {
			target = max(killAt[next], from)
		}
		// One kill in three is aimed inside the write itself: that append is 8 MB
		// and the victim is killed as soon as the file starts growing.
		inWrite := target > 0 && next%3 == 0
		huge := -1
		if inWrite {
			huge = target
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := selfCmd(ctx, "TestHelperCrashAppender",
			"PI_LSP_CRASH_APPEND="+path, "PI_LSP_CRASH_FROM="+strconv.Itoa(from), "PI_LSP_CRASH_TO="+strconv.Itoa(total),
			"PI_LSP_CRASH_SEED_VICTIM="+strconv.FormatInt(seed, 10), "PI_LSP_CRASH_HUGE="+strconv.Itoa(huge))
		stdout := isolate.StartPiped(t, cmd)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		didKill := false
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) == 0 {
				continue
			}
			switch fields[0] {
			case "ack":
				seq, _ := strconv.Atoi(fields[1])
				acked[seq] = fields[2]
			case "error":
				t.Fatalf("victim failed: %s", sc.Text())
			case "begin":
				seq, _ := strconv.Atoi(fields[1])
				// The first "begin" at or past the kill point (the parent may read
				// with a lag, and a restart may begin past it).
				if didKill || target < 0 || seq < target {
					continue
				}
				if inWrite {
					if seq != huge {
						continue
					}
					st0, err := os.Stat(path)
					if err != nil {
						t.Fatal(err)
					}
					for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
						if st, err := os.Stat(path); err == nil && st.Size() > st0.Size() {
							break
						}
						time.Sleep(20 * time.Microsecond)
					}
					_ = isolate.KillGroup(cmd)
					didKill = true
					inWriteKills++
					continue
				}
				// Kill right away, within a couple of milliseconds (inside the lock,
				// the write or the fsync), or up to 15 ms later.
				var d time.Duration
				switch r.Intn(3) {
				case 1:
					d = time.Duration(r.Intn(2000)) * time.Microsecond
				case 2:
					d = time.Duration(r.Intn(15000)) * time.Microsecond
				}
				if d > 0 {
					time.Sleep(d)
				}
				_ = isolate.KillGroup(cmd)
				didKill = true
				killDelay = append(killDelay, d)
			}
		}
		werr := cmd.Wait()
		cancel()
		if didKill {
			killed++
			next++
		} else if werr != nil {
			t.Fatalf("victim exited without being killed: %v", werr)
		}
		st := checkAppendFile(t, path, acked)
		if st.torn && st.file.CompleteSize != lastTorn {
			tornSeen++ // a new torn tail (a kill before the next append sees the same one)
			lastTorn = st.file.CompleteSize
		}
		for seq := range st.seqs {
			if _, ok := acked[seq]; !ok {
				unacked++ // written whole, killed before its acknowledgement
				acked[seq] = st.seqs[seq]
			}
		}
		// The follower (what the LSP server shows) never shows more than a fresh load.
		if _, err := live.Refresh(); err != nil {
			t.Fatal(err)
		}
		if got, want := len(live.Index.Entries()), len(st.file.Entries); got != want {
			t.Fatalf("the follower shows %d entries, a fresh load %d", got, want)
		}
		// Real Pi loads the file as left by a kill: on the first kill, on the first
		// torn tail and on every tenth kill.
		if didKill && (killed == 1 || st.torn && tornSeen == 1 || killed%10 == 0) {
			if checkPiLoads(t, o, path) {
				pilLoads++
			}
		}
		from = st.maxSeq + 1
	}
	st := checkAppendFile(t, path, acked)
	if len(st.seqs) != total {
		t.Fatalf("%d entries at the end, want %d", len(st.seqs), total)
	}
	// Every line of the file is a whole entry, except torn tails left by kills.
	data := sessiontest.Read(t, path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	bad := 0
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			bad++
		}
	}
	if bad != st.skipped {
		t.Errorf("%d unparsable lines, pi-lsp skipped %d", bad, st.skipped)
	}
	if _, err := live.Refresh(); err != nil {
		t.Fatal(err)
	}
	for i, e := range st.file.Entries {
		if le := live.Index.Entries()[i]; le.ID != e.ID || string(le.Raw()) != string(e.Raw()) {
			t.Fatalf("follower entry %d differs from a fresh load", i)
		}
	}
	if checkPiLoads(t, o, path) {
		pilLoads++
	}
	sort.Slice(killDelay, func(i, j int) bool { return killDelay[i] < killDelay[j] })
	t.Logf("RESULT crash-append: appends=%d victim-runs=%d kills=%d (in-write %d, random %d) torn-tails=%d written-before-ack=%d skipped-lines=%d file=%d bytes real-Pi-loads=%d",
		total, runs, killed, inWriteKills, killed-inWriteKills, tornSeen, unacked, st.skipped, len(data), pilLoads)
	// A kill delayed by up to 15 ms can let the victim finish the last appends, and with
	// them the last kill points: those count as overtaken, not missed.
	if overtaken := len(killAt) - next; killed+overtaken != kills || overtaken > 2 {
		t.Errorf("%d kills and %d kill points overtaken at the end, want %d kills", killed, overtaken, kills)
	}
}

// ---- compaction ----

// slowSummarizer takes 50-600 ms in 10 ms steps (honouring ctx) and returns a summary
// of 2 KB, or, one time in three, 1-4 MB so that writing takes long enough to be hit.
type slowSummarizer struct {
	mu  sync.Mutex // a split turn's two summaries run at once
	r   *rand.Rand
	big bool // always 8 MB
}

func (s *slowSummarizer) intn(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Intn(n)
}

func (s *slowSummarizer) Name() string { return "slow" }

func (s *slowSummarizer) Summarize(ctx context.Context, req compaction.Request) (compaction.Result, error) {
	steps := 5 + s.intn(55)
	for i := 0; i < steps; i++ {
		select {
		case <-ctx.Done():
			return compaction.Result{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	size := 2048
	if s.big {
		size = 8 << 20
	} else if s.intn(3) == 0 {
		size = 1<<20 + s.intn(3<<20)
	}
	return compaction.Result{Text: "## Goal\n" + entryText(0, size), Model: "slow"}, nil
}

// TestHelperCrashCompactor is the victim of TestCrashDuringCompaction: it compacts the
// session, printing "phase P NANOS" as the job moves and "done ID NANOS" after Run
// returns (NANOS: since the victim started the job).
func TestHelperCrashCompactor(t *testing.T) {
	path := os.Getenv("PI_LSP_CRASH_COMPACT")
	if path == "" {
		t.Skip("victim process of TestCrashDuringCompaction only")
	}
	seed, _ := strconv.ParseInt(os.Getenv("PI_LSP_CRASH_SEED_VICTIM"), 10, 64)
	start := time.Now()
	res, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{
		Settings:   session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 2000},
		Summarizer: &slowSummarizer{r: rand.New(rand.NewSource(seed)), big: os.Getenv("PI_LSP_CRASH_BIG") == "1"},
		Phase:      func(p string) { fmt.Printf("phase %s %d\n", p, time.Since(start)) },
	})
	if err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(3)
	}
	fmt.Printf("done %s %d\n", res.Entry.ID, time.Since(start))
	os.Exit(0)
}

// appendTurn appends a user message and an assistant answer of about 3,000 tokens, so
// there is always something new to compact.
func appendTurn(t *testing.T, path string, round int) {
	t.Helper()
	ix, taken := sessiontest.ForAppend(t, path)
	user, _ := json.Marshal(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("round %d: continue", round)}}, "timestamp": time.Now().UnixMilli()})
	asst, _ := json.Marshal(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": entryText(round, 12000)}},
		"api": "openai-completions", "provider": "openai", "model": "gpt-4.1",
		"usage":      map[string]any{"input": 5000, "output": 3000, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 8000, "cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
		"stopReason": "stop", "timestamp": time.Now().UnixMilli()})
	if _, err := session.Append(path, taken, []session.NewEntry{
		{Type: session.TypeMessage, ParentID: ix.LeafID(), Fields: []session.Field{{Key: "message", Value: json.RawMessage(user)}}},
		{Type: session.TypeMessage, ParentID: session.ChainToPrevious, Fields: []session.Field{{Key: "message", Value: json.RawMessage(asst)}}},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestCrashDuringCompaction(t *testing.T) {
	const rounds = 20
	seed := crashSeed(t)
	r := rand.New(rand.NewSource(seed))
	isolate.Setup(t)
	o := optionalOracle(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "2026-01-01T00-00-00-000Z_0190a000-0000-7000-8000-00000000002a.jsonl")
	sessiontest.Generate(t, path, benchgen.Options{Entries: 2500, Seed: 42})
	// Each round aims at one of: preparing, summarizing, writing (a random moment of
	// each, scaled by how long the phase took in earlier rounds), or inside the write
	// itself (an 8 MB summary; the victim dies as soon as the file starts growing).
	aims := []string{"preparing", "summarizing", "writing", "in-write"}
	killedIn := map[string]int{}
	var completed, torn, killed, pilLoads int
	var written []string // acknowledged compaction entry ids
	prepDur, writeDur := 5*time.Millisecond, 2*time.Millisecond
	for round := 0; round < rounds; round++ {
		appendTurn(t, path, round)
		before := sessiontest.Read(t, path)
		aim := aims[round%len(aims)]
		big := "0"
		if aim == "in-write" {
			big = "1"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := selfCmd(ctx, "TestHelperCrashCompactor", "PI_LSP_CRASH_COMPACT="+path,
			"PI_LSP_CRASH_SEED_VICTIM="+strconv.FormatInt(seed+int64(round), 10), "PI_LSP_CRASH_BIG="+big)
		stdout := isolate.StartPiped(t, cmd)
		var delay time.Duration
		switch aim {
		case "preparing":
			delay = time.Duration(r.Int63n(int64(prepDur)))
		case "summarizing":
			delay = time.Duration(r.Intn(500)) * time.Millisecond
		case "writing":
			delay = time.Duration(r.Int63n(int64(writeDur)))
		}
		phaseAt := map[string]time.Duration{}
		lines := make(chan string, 64)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		last, done := "", ""
		var timer <-chan time.Time
		didKill := false
		for lines != nil {
			select {
			case l, ok := <-lines:
				if !ok {
					lines = nil
					continue
				}
				f := strings.Fields(l)
				switch {
				case len(f) == 3 && f[0] == "phase":
					last = f[1]
					at, _ := strconv.ParseInt(f[2], 10, 64)
					phaseAt[f[1]] = time.Duration(at)
					if f[1] == "summarizing" {
						prepDur = max(prepDur, phaseAt["summarizing"]-phaseAt["preparing"])
					}
					if didKill || timer != nil {
						continue
					}
					if f[1] == aim {
						timer = time.After(delay)
					}
					if aim == "in-write" && f[1] == "writing" {
						for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
							if st, err := os.Stat(path); err == nil && st.Size() > int64(len(before)) {
								break
							}
							time.Sleep(20 * time.Microsecond)
						}
						_ = isolate.KillGroup(cmd)
						didKill = true
					}
				case len(f) == 3 && f[0] == "done":
					done = f[1]
					end, _ := strconv.ParseInt(f[2], 10, 64)
					if at, ok := phaseAt["writing"]; ok && aim != "in-write" {
						writeDur = max(writeDur, time.Duration(end)-at)
					}
				case len(f) > 0 && f[0] == "error":
					t.Fatalf("victim failed: %s", l)
				}
			case <-timer:
				_ = isolate.KillGroup(cmd)
				didKill = true
				timer = nil
			}
		}
		werr := cmd.Wait()
		cancel()
		if didKill && done == "" {
			killed++
			if aim == "in-write" && last == "writing" {
				killedIn["in-write"]++
			} else {
				killedIn[last]++
			}
		} else if werr != nil && done == "" {
			t.Fatalf("victim exited without being killed: %v", werr)
		}
		if done != "" {
			completed++
			written = append(written, done)
		}
		// The file is the old bytes plus, at most, one compaction entry: whole (and
		// then visible) or torn (and then skipped).
		after := sessiontest.Read(t, path)
		if len(after) < len(before) || string(after[:len(before)]) != string(before) {
			t.Fatalf("round %d: the file was changed before its end", round)
		}
		f, err := session.Load(path)
		if err != nil {
			t.Fatalf("round %d: pi-lsp cannot load the file: %v", round, err)
		}
		prev, _ := session.Parse(before)
		added := f.Entries[len(prev.Entries):]
		tail := after[len(before):]
		switch {
		case len(tail) == 0:
		case tail[len(tail)-1] == '\n':
			if len(added) != 1 || added[0].Type != session.TypeCompaction {
				t.Fatalf("round %d: a whole line was added that is not one compaction entry", round)
			}
			if !strings.HasPrefix(added[0].Compaction().Summary, "## Goal\n") {
				t.Fatalf("round %d: the compaction entry's summary is incomplete", round)
			}
		default:
			torn++
			if len(added) != 0 || !f.Torn {
				t.Fatalf("round %d: a torn compaction line became visible (%d entries added, torn=%v)", round, len(added), f.Torn)
			}
		}
		for _, id := range written {
			ix := session.NewIndex(f)
			if e := ix.Entry(id); e == nil || e.Type != session.TypeCompaction {
				t.Fatalf("acknowledged compaction %s is missing", id)
			}
		}
		if didKill && (killed == 1 || len(tail) > 0 && tail[len(tail)-1] != '\n' || round == rounds-1) {
			if checkPiLoads(t, o, path) {
				pilLoads++
			}
		}
	}
	if checkPiLoads(t, o, path) {
		pilLoads++
	}
	t.Logf("RESULT crash-compaction: rounds=%d kills=%d (preparing=%d summarizing=%d writing=%d inside-the-write=%d) completed=%d torn-tails=%d real-Pi-loads=%d (phase lengths seen: preparing ≤%v, writing ≤%v)",
		rounds, killed, killedIn["preparing"], killedIn["summarizing"], killedIn["writing"], killedIn["in-write"], completed, torn, pilLoads,
		prepDur.Round(time.Millisecond), writeDur.Round(time.Microsecond))
	if killed < rounds/2 {
		t.Errorf("only %d of %d rounds were killed", killed, rounds)
	}
}
