package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

var header = testfile.SessionHeader("s1")

func writeFile(t *testing.T, content string) string {
	t.Helper()
	return testfile.Temp(t, "s.jsonl", content)
}

func userLine(id, parent, text string) string {
	p := "null"
	if parent != "" {
		p = strconv.Quote(parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":%q,"timestamp":1}}`, id, p, text)
}

func TestUnknownTypesAndFieldsSurviveUntouched(t *testing.T) {
	lines := []string{
		header,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1,"extra":{"z":1,"a":[1,2]}},"future":true}`,
		`{"type":"brand_new_type","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","payload":{"k":"v"}}`,
	}
	f, err := session.Parse([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range f.Entries {
		if string(e.Raw()) != lines[i+1] {
			t.Errorf("entry %d raw = %s, want the line as stored", i, e.Raw())
		}
	}
	ix := session.NewIndex(f)
	if got := ix.Leaf().Type; got != "brand_new_type" {
		t.Errorf("leaf type = %q", got)
	}
	c := ix.BuildContext("")
	if len(c.Messages) != 1 || !bytes.Contains(c.Messages[0].Raw(), []byte(`"extra":{"z":1,"a":[1,2]}`)) {
		t.Errorf("stored message not verbatim: %s", c.Messages[0].Raw())
	}
}

func TestBadInputIsReportedNeverPanicsNeverChangesTheFile(t *testing.T) {
	big := `{"type":"message","id":"b1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"` + strings.Repeat("x", 50<<20) + `","timestamp":2}}`
	cases := map[string]struct {
		content   string
		wantErr   bool
		skipped   int
		wantTorn  bool
		wantCount int
	}{
		"not json":          {content: header + "\nthis is not json\n" + userLine("a1", "", "hi") + "\n", skipped: 1, wantCount: 1},
		"wrong types":       {content: header + "\n" + `{"type":"message","id":7,"parentId":["x"],"timestamp":5,"message":"nope"}` + "\n" + userLine("a1", "", "hi") + "\n", wantCount: 2},
		"missing header":    {content: userLine("a1", "", "hi") + "\n", wantErr: true},
		"empty":             {content: "", wantErr: true},
		"binary garbage":    {content: "\x00\xff\xfe\x01garbage\x7f\n\x00\x00", wantErr: true},
		"garbage then head": {content: "\x00\xffjunk\n" + header + "\n" + userLine("a1", "", "hi") + "\n", skipped: 1, wantCount: 1},
		"torn last line":    {content: header + "\n" + userLine("a1", "", "hi") + "\n" + `{"type":"message","id":"a2","par`, skipped: 1, wantTorn: true, wantCount: 1},
		"50 MB single line": {content: header + "\n" + userLine("a1", "", "hi") + "\n" + big + "\n", wantCount: 2},
		"non-object json":   {content: header + "\n5\n\"str\"\nnull\n[1]\n" + userLine("a1", "", "hi") + "\n", skipped: 4, wantCount: 1},
		"deeply nested":     {content: header + "\n" + `{"type":"x","id":"d","parentId":null,"v":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}\n", skipped: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, tc.content)
			before, _ := os.ReadFile(p)
			f, err := session.Load(p)
			after, _ := os.ReadFile(p)
			if !bytes.Equal(before, after) {
				t.Fatal("loading changed the file")
			}
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				if !errors.Is(err, session.ErrNoHeader) {
					t.Errorf("error %v is not ErrNoHeader", err)
				}
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Skipped) != tc.skipped || f.Torn != tc.wantTorn || len(f.Entries) != tc.wantCount {
				t.Errorf("skipped %v torn %v entries %d; want %d %v %d", f.Skipped, f.Torn, len(f.Entries), tc.skipped, tc.wantTorn, tc.wantCount)
			}
			ix := session.NewIndex(f)
			c := ix.BuildContext("")
			_ = session.EstimateContextTokens(c.Messages)
			_ = ix.Tree()
		})
	}
}

func TestCyclesAndSelfParentsNeverHang(t *testing.T) {
	content := header + "\n" +
		`{"type":"message","id":"c1","parentId":"c2","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}` + "\n" +
		`{"type":"message","id":"c2","parentId":"c1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}}` + "\n" +
		`{"type":"message","id":"s1","parentId":"s1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"c","timestamp":3}}` + "\n"
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := session.Parse([]byte(content))
		if err != nil {
			t.Error(err)
			return
		}
		ix := session.NewIndex(f)
		kinds := map[session.ProblemKind]int{}
		for _, p := range ix.Problems() {
			kinds[p.Kind]++
		}
		if kinds[session.ProblemCycle] != 1 || kinds[session.ProblemSelfParent] != 1 {
			t.Errorf("problems = %v", ix.Problems())
		}
		for _, id := range []string{"c1", "c2", "s1"} {
			if p := ix.Path(id); len(p) == 0 || len(p) > 2 {
				t.Errorf("path(%s) has %d entries", id, len(p))
			}
			_ = ix.BuildContext(id)
		}
		if roots := ix.Tree(); len(roots) != 1 || roots[0].Entry.ID != "s1" {
			t.Errorf("tree roots = %d (Pi shows only the self-parented root)", len(roots))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("hung on a cycle")
	}
}

func TestAppendAfterTornLineStartsAFreshLine(t *testing.T) {
	torn := `{"type":"message","id":"zz","parentId":"a1","time`
	p := writeFile(t, header+"\n"+userLine("a1", "", "hi")+"\n"+torn)
	f, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	written, err := session.Append(p, nil, []session.NewEntry{{Type: session.TypeLabel, ParentID: ix.LeafID(), Fields: []session.Field{{Key: "targetId", Value: "a1"}, {Key: "label", Value: "start"}}}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if !bytes.Contains(data, []byte(torn+"\n{")) {
		t.Fatalf("torn bytes not kept on their own line:\n%s", data)
	}
	f2, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	ix2 := session.NewIndex(f2)
	if ix2.LeafID() != written[0].ID || ix2.Label("a1") != "start" {
		t.Fatalf("appended entry lost: leaf %s label %q", ix2.LeafID(), ix2.Label("a1"))
	}
	if !bytes.HasPrefix(data, []byte(header+"\n"+userLine("a1", "", "hi")+"\n"+torn)) {
		t.Fatal("existing bytes changed")
	}
}

func TestAppendWritesWholeLinesWithUniqueIDs(t *testing.T) {
	p := writeFile(t, header+"\n"+userLine("a1", "", "hi")+"\n")
	f, _ := session.Load(p)
	ix := session.NewIndex(f)
	taken := map[string]*session.Entry{"a1": ix.Entry("a1")}
	var news []session.NewEntry
	for i := 0; i < 200; i++ {
		parent := session.ChainToPrevious
		if i == 0 {
			parent = "a1"
		}
		news = append(news, session.NewEntry{Type: session.TypeCustom, ParentID: parent, Fields: []session.Field{{Key: "customType", Value: "t"}, {Key: "data", Value: map[string]int{"i": i}}}})
	}
	written, err := session.Append(p, taken, news)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{"a1": true}
	for i, e := range written {
		if len(e.ID) != 8 || strings.Trim(e.ID, "0123456789abcdef") != "" || seen[e.ID] {
			t.Fatalf("bad or duplicate id %q", e.ID)
		}
		seen[e.ID] = true
		if i > 0 && e.ParentID != written[i-1].ID {
			t.Fatalf("entry %d not chained", i)
		}
	}
	data, _ := os.ReadFile(p)
	if !bytes.HasSuffix(data, []byte("\n")) || bytes.Count(data, []byte("\n")) != 202 {
		t.Fatalf("want 202 whole lines")
	}
}

func TestCreateWritesAV3HeaderNamedAsPi(t *testing.T) {
	dir := t.TempDir()
	p, h, err := session.Create(dir, "/home/u/proj")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != session.FileName(h.Timestamp, h.ID) {
		t.Errorf("name %s", filepath.Base(p))
	}
	f, err := session.Load(p)
	if err != nil || f.Header.Version != 3 || f.Header.Cwd != "/home/u/proj" {
		t.Fatalf("header %+v %v", f.Header, err)
	}
	if session.MostRecent(dir) != p {
		t.Error("MostRecent does not find it")
	}
}

func TestEncodeCwdAsPi(t *testing.T) {
	for in, want := range map[string]string{
		"/home/user/my proj": "--home-user-my proj--",
		`/a/b:c\d`:           "--a-b-c-d--",
		`C:\Users\me\proj`:   "--C--Users-me-proj--",
		"relative/path":      "--relative-path--",
		"/":                  "----",
	} {
		if got := session.EncodeCwd(in); got != want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", in, got, want)
		}
	}
}

// A trusted project's settings merge into the global ones key by key (an untrusted
// project's are not read: TestSettingsMatchPi16).
func TestSettingsProjectOverGlobalKeyByKey(t *testing.T) {
	agent, cwd := t.TempDir(), t.TempDir()
	trust, _ := json.Marshal(map[string]bool{cwd: true})
	os.WriteFile(filepath.Join(agent, "trust.json"), trust, 0o644)
	os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"compaction":{"reserveTokens":1000,"keepRecentTokens":50},"branchSummary":{"reserveTokens":7}}`), 0o644)
	os.MkdirAll(filepath.Join(cwd, ".pi"), 0o755)
	os.WriteFile(filepath.Join(cwd, ".pi", "settings.json"), []byte(`{"compaction":{"keepRecentTokens":99,"enabled":false}}`), 0o644)
	s := session.LoadSettings(agent, cwd)
	if s.Compaction != (session.CompactionSettings{Enabled: false, ReserveTokens: 1000, KeepRecentTokens: 99}) || s.BranchSummary.ReserveTokens != 7 {
		t.Errorf("merged settings %+v", s)
	}
	os.WriteFile(filepath.Join(cwd, ".pi", "settings.json"), []byte(`{not json`), 0o644)
	if s := session.LoadSettings(agent, cwd); len(s.Errors) != 1 || s.Compaction.KeepRecentTokens != 50 {
		t.Errorf("broken project settings: %+v", s)
	}
}

func TestTokenAccountingAsPi(t *testing.T) {
	msg := func(js string) *session.Message {
		m, err := session.DecodeMessage(json.RawMessage(js))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	msgs := []*session.Message{
		msg(`{"role":"user","content":"hello world!"}`),
		msg(`{"role":"assistant","content":[],"usage":{"input":1000,"output":200,"cacheRead":0,"cacheWrite":0,"totalTokens":1200},"stopReason":"stop"}`),
		msg(`{"role":"user","content":"12345678"}`),
		msg(`{"role":"assistant","content":[{"type":"text","text":"err"}],"stopReason":"error"}`),
		msg(`{"role":"toolResult","content":[{"type":"text","text":"abcd"}]}`),
	}
	ct := session.EstimateContextTokens(msgs)
	if ct.Tokens != 1204 || ct.UsageTokens != 1200 || ct.TrailingTokens != 4 || ct.LastUsageIndex == nil || *ct.LastUsageIndex != 1 {
		t.Errorf("estimateContextTokens = %+v", ct)
	}
	s := session.CompactionSettings{Enabled: true, ReserveTokens: 10000}
	if session.ShouldCompact(90000, 100000, s) || !session.ShouldCompact(90001, 100000, s) {
		t.Error("shouldCompact boundary")
	}
	if got := session.EstimateTokens(msg(`{"role":"assistant","content":[{"type":"thinking","thinking":"12345678"},{"type":"text","text":"abcd"},{"type":"toolCall","name":"read","arguments":{"path":"a.ts"}}]}`)); got != 8 {
		t.Errorf("assistant estimate %d, want 8", got)
	}
	if got := session.EstimateTokens(msg(`{"role":"toolResult","content":[{"type":"image","data":"x"}]}`)); got != 1200 {
		t.Errorf("image estimate %d", got)
	}
}

// TestFollowMatchesAFreshLoad appends 1,000 entries from another process, some lines split
// across writes, while a Live session follows the file.
func TestFollowMatchesAFreshLoad(t *testing.T) {
	p := writeFile(t, header+"\n")
	l, err := session.OpenLive(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=TestHelperAppender")
	cmd.Env = append(os.Environ(), "PI_LSP_TEST_APPENDER="+p)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for running := true; running; {
		select {
		case err := <-waited:
			if err != nil {
				t.Fatalf("appender: %v", err)
			}
			running = false
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("appender timed out")
		case <-time.After(time.Millisecond):
		}
		if _, err := l.Refresh(); err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Index.Entries() {
			if e.ID == "" || !json.Valid(e.Raw()) {
				t.Fatalf("partial line emitted: %q", e.Raw())
			}
		}
	}
	if _, err := l.Refresh(); err != nil {
		t.Fatal(err)
	}
	f, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 1000 || len(l.Index.Entries()) != 1000 {
		t.Fatalf("followed %d entries, fresh load %d, want 1000", len(l.Index.Entries()), len(f.Entries))
	}
	for i, e := range f.Entries {
		if got := l.Index.Entries()[i]; got.ID != e.ID || !bytes.Equal(got.Raw(), e.Raw()) {
			t.Fatalf("entry %d differs", i)
		}
	}
	if l.Index.LeafID() != session.NewIndex(f).LeafID() {
		t.Fatal("leaf differs")
	}
}

// TestHelperAppender is the other process of TestFollowMatchesAFreshLoad.
func TestHelperAppender(t *testing.T) {
	p := os.Getenv("PI_LSP_TEST_APPENDER")
	if p == "" {
		t.Skip("helper process only")
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewSource(1))
	parent := ""
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("%08x", i+1)
		line := []byte(userLine(id, parent, strings.Repeat("y", r.Intn(300))) + "\n")
		parent = id
		if i%7 == 0 { // split the line across writes
			cut := 1 + r.Intn(len(line)-1)
			f.Write(line[:cut])
			time.Sleep(time.Duration(r.Intn(300)) * time.Microsecond)
			f.Write(line[cut:])
		} else {
			f.Write(line)
		}
	}
}

// TestAppendedFileLoadsInRealPi appends entries with pi-lsp's writer and checks that real
// Pi loads the file with exactly the context pi-lsp reports.
func TestAppendedFileLoadsInRealPi(t *testing.T) {
	o := oracle.NeedLive(t)
	for _, cf := range oracle.Corpus(t) {
		if cf.Synthetic {
			continue
		}
		t.Run(cf.Name, func(t *testing.T) {
			data, _ := os.ReadFile(cf.Path)
			p := writeFile(t, string(data))
			ix, taken := sessiontest.ForAppend(t, p)
			_, err := session.Append(p, taken, []session.NewEntry{
				{Type: session.TypeMessage, ParentID: ix.LeafID(), Fields: []session.Field{{Key: "message", Value: json.RawMessage(`{"role":"user","content":[{"type":"text","text":"appended by pi-lsp"}],"timestamp":1795957999999}`)}}},
				{Type: session.TypeLabel, ParentID: session.ChainToPrevious, Fields: []session.Field{{Key: "targetId", Value: ix.Entries()[0].ID}, {Key: "label", Value: "from-pi-lsp"}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			f2, _ := session.Load(p)
			ix2 := session.NewIndex(f2)
			c := ix2.BuildContext("")
			got := o.PiLoad(t, p)
			if got.LeafID == nil || *got.LeafID != ix2.LeafID() {
				t.Errorf("Pi's leaf %v, pi-lsp's %s", got.LeafID, ix2.LeafID())
			}
			mine := make([]json.RawMessage, len(c.Messages))
			for i, m := range c.Messages {
				mine[i] = m.Raw()
			}
			var a, b any
			ja, _ := json.Marshal(mine)
			jb, _ := json.Marshal(got.Messages)
			json.Unmarshal(ja, &a)
			json.Unmarshal(jb, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("Pi's context differs from pi-lsp's after the append:\n%s\n%s", ja, jb)
			}
		})
	}
}

func TestAppendIfSizeRefusesAfterAConcurrentAppend(t *testing.T) {
	p := writeFile(t, header+"\n"+userLine("a1", "", "hi")+"\n")
	st, _ := os.Stat(p)
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(userLine("a2", "a1", "other writer") + "\n")
	f.Close()
	before, _ := os.ReadFile(p)
	_, err := session.AppendIfSize(p, st.Size(), nil, []session.NewEntry{{Type: session.TypeCustom, ParentID: "a1", Fields: []session.Field{{Key: "customType", Value: "x"}}}})
	if !errors.Is(err, session.ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Fatal("written anyway")
	}
}

// The index keeps the projection of the leaf asked for last, and drops it when an entry
// is appended: an appended entry can change what a leaf's path is (here it is the parent
// an orphan named).
func TestProjectedPathIsKeptUntilAnAppend(t *testing.T) {
	f, err := session.Parse([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}}
{"type":"message","id":"x","parentId":"m","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"orphan","timestamp":3}}
`))
	if err != nil {
		t.Fatal(err)
	}
	ix := session.NewIndex(f)
	path, p := ix.ProjectedPath("b")
	again, q := ix.ProjectedPath("b")
	if len(path) != 2 || len(p.Messages) != 2 || &again[0] != &path[0] || &q.Messages[0] != &p.Messages[0] {
		t.Fatalf("path %d, messages %d: the second ask is not the kept projection", len(path), len(p.Messages))
	}
	if c := ix.BuildContext("b"); len(c.Messages) != 2 || &c.Messages[0] != &p.Messages[0] {
		t.Fatal("the context of the leaf is not made from the kept projection")
	}
	if orphan, op := ix.ProjectedPath("x"); len(orphan) != 1 || len(op.Messages) != 1 {
		t.Fatalf("the orphan: path %d, messages %d", len(orphan), len(op.Messages))
	}
	m, err := session.Parse([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"m","parentId":"b","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"the missing parent","timestamp":4}}
`))
	if err != nil {
		t.Fatal(err)
	}
	ix.Append(m.Entries[0])
	if path, p := ix.ProjectedPath("x"); len(path) != 4 || len(p.Messages) != 4 {
		t.Fatalf("after its parent was appended: the orphan's path %d, messages %d", len(path), len(p.Messages))
	}
	if path, p := ix.ProjectedPath("nope"); path != nil || len(p.Messages) != 0 {
		t.Fatal("an unknown leaf has a path")
	}
}
