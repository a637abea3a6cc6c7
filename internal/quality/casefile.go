package quality

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// The benchmark's cases are text files (the format is described in the package doc),
// one a case, grouped by what they exercise.
//
//go:embed cases
var caseFiles embed.FS

// LoadCases reads every .txt file below dir of fsys as a case.
func LoadCases(fsys fs.FS, dir string) ([]*Case, error) {
	var all []*Case
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".txt" {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		c, err := ParseCase(p, data)
		if err != nil {
			return err
		}
		all = append(all, c)
		return nil
	})
	return all, err
}

// ParseCase reads one case file; file names it in errors, and its base name must be the
// case's name.
func ParseCase(file string, data []byte) (*Case, error) {
	f, err := parseFile(file, data)
	if err != nil {
		return nil, err
	}
	if f.head.key != "case" {
		return nil, f.errAt(f.head, "a case file starts with \"case NAME\"")
	}
	c := f.c
	if want := strings.TrimSuffix(path.Base(file), ".txt"); c.Name != want {
		return nil, f.errAt(f.head, "the case is named %q, its file %q", c.Name, want)
	}
	switch {
	case c.Title == "":
		return nil, f.errAt(f.head, "the case has no title")
	case c.Kind == "":
		return nil, f.errAt(f.head, "the case has no kind (compaction or branch)")
	case c.Kind == Branch && c.Target == "":
		return nil, f.errAt(f.head, "a branch case needs a target mark")
	case c.Kind == History && c.Target != "":
		return nil, f.errAt(f.head, "a compaction case has no target")
	case c.Kind == Branch && (c.Keep != 0 || c.KeepLast):
		return nil, f.errAt(f.head, "a branch case keeps nothing (no keep)")
	case f.cwd != "":
		return nil, f.errAt(f.head, "a case's directory is /home/dev/src/NAME (no cwd)")
	}
	if c.Target != "" && !f.marks[c.Target] {
		return nil, f.errAt(f.head, "target %q is not a mark of the session", c.Target)
	}
	return c, nil
}

// ParseSession reads a session file (a header "session NAME" and "cwd DIR", then turns)
// and writes the session it describes.
func ParseSession(file string, data []byte) ([]byte, error) {
	f, err := parseFile(file, data)
	if err != nil {
		return nil, err
	}
	if f.head.key != "session" || f.cwd == "" {
		return nil, f.errAt(f.head, "a session file starts with \"session NAME\" and \"cwd DIR\"")
	}
	if f.c.Title != "" || f.c.Kind != "" || f.hasExpect {
		return nil, f.errAt(f.head, "a session file has turns only (no title, kind or expect)")
	}
	s := NewScript(f.c.Name, f.cwd)
	f.c.Script(s)
	return s.Bytes(), nil
}

// item is one keyword line and its value: the rest of the line after one space, or the
// block of "| " lines right under it, joined by newlines.
type item struct {
	line       int
	key, value string
	block      bool
}

// file is a case or session file being read.
type file struct {
	name      string
	items     []item
	i         int
	head      item
	c         *Case
	cwd       string
	steps     []func(*Script)
	marks     map[string]bool
	hasExpect bool
}

func (f *file) errAt(it item, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", f.name, it.line, fmt.Sprintf(format, args...))
}

// scan splits data into items.
func scan(name string, data []byte) ([]item, error) {
	var items []item
	var block []string
	open := -1 // the item a block line would belong to
	flush := func() {
		if open >= 0 && block != nil {
			items[open].value, items[open].block = strings.Join(block, "\n"), true
		}
		block = nil
	}
	text := string(data)
	if strings.ContainsRune(text, '\r') {
		line := 1 + strings.Count(text[:strings.IndexRune(text, '\r')], "\n")
		return nil, fmt.Errorf("%s:%d: a carriage return (the file must have \\n line ends)", name, line)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for n, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if t != "" && strings.TrimRight(t, " \t") != t {
			return nil, fmt.Errorf("%s:%d: white space at the end of a line (editors drop it: write the value as a quoted Go string)", name, n+1)
		}
		switch {
		case t == "" || t[0] == '#':
			flush()
			open = -1
		case t[0] == '|':
			if open < 0 {
				return nil, fmt.Errorf("%s:%d: a block line (|) must follow a keyword line that has no value, or another block line", name, n+1)
			}
			switch {
			case t == "|":
				block = append(block, "")
			case t[1] == ' ':
				block = append(block, t[2:])
			default:
				return nil, fmt.Errorf("%s:%d: a block line is \"|\" alone or \"| \" and its text", name, n+1)
			}
		default:
			flush()
			key, value, hasValue := strings.Cut(t, " ")
			if strings.HasPrefix(value, "\"") {
				v, err := strconv.Unquote(value)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: a value that starts with \" is a Go string literal: %v", name, n+1, err)
				}
				value = v
			}
			items = append(items, item{line: n + 1, key: key, value: value})
			open = -1
			if !hasValue {
				open = len(items) - 1
			}
		}
	}
	flush()
	return items, nil
}

// directives of the session, with the fields they take; a field marked * may repeat.
var (
	turnFields = map[string][]string{
		"user": nil, "say": nil, "fail": nil, "mark": nil, "from": nil,
		"do": nil, "abort": nil, // and calls
		"shell":          {"exit", "out"},
		"note":           {"content"},
		"compaction":     {"summary", "read-file*", "modified-file*"},
		"branch-summary": {"summary", "read-file*", "modified-file*"},
	}
	callFields = map[string][]string{
		"sh":           {"out", "pending"},
		"shfail":       {"exit", "out", "pending"},
		"read":         {"offset", "limit", "content", "pending"},
		"read-missing": {"abs", "pending"},
		"edit":         {"old", "new", "pending"},
		"edit-miss":    {"old", "new", "pending"},
		"write":        {"content", "pending"},
		"tool":         {"args", "result", "error", "pending"},
	}
	expectFields = []string{"goal*", "latest", "constraint*", "done*", "in-progress*", "blocked*", "next*",
		"stale*", "entity*", "noise*", "read-file*", "modified-file*"}
	headerKeys = map[string]bool{"case": true, "session": true, "cwd": true, "title": true, "kind": true,
		"keep": true, "target": true, "held-out": true}
)

func parseFile(name string, data []byte) (*file, error) {
	items, err := scan(name, data)
	if err != nil {
		return nil, err
	}
	f := &file{name: name, items: items, c: &Case{}, marks: map[string]bool{}}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s:1: the file is empty", name)
	}
	f.head = items[0]
	if err := f.header(); err != nil {
		return nil, err
	}
	for f.i < len(f.items) {
		it := f.items[f.i]
		f.i++
		switch {
		case it.key == "expect":
			if err := f.expect(it); err != nil {
				return nil, err
			}
		case headerKeys[it.key]:
			return nil, f.errAt(it, "%s belongs in the header, before the first turn", it.key)
		default:
			if err := f.turn(it); err != nil {
				return nil, err
			}
		}
	}
	steps := f.steps
	f.c.Script = func(s *Script) {
		for _, step := range steps {
			step(s)
		}
	}
	return f, nil
}

func (f *file) header() error {
	seen := map[string]bool{}
	for ; f.i < len(f.items) && headerKeys[f.items[f.i].key]; f.i++ {
		it := f.items[f.i]
		if seen[it.key] {
			return f.errAt(it, "%s twice", it.key)
		}
		seen[it.key] = true
		if (it.key == "case" || it.key == "session") && f.i != 0 {
			return f.errAt(it, "%s comes first", it.key)
		}
		if it.key == "held-out" {
			if it.value != "" {
				return f.errAt(it, "held-out takes no value")
			}
			f.c.HeldOut = true
			continue
		}
		if it.value == "" || it.block {
			return f.errAt(it, "%s needs a value on its line", it.key)
		}
		switch it.key {
		case "case", "session":
			f.c.Name = it.value
		case "cwd":
			f.cwd = it.value
		case "title":
			f.c.Title = it.value
		case "kind":
			switch k := Kind(it.value); k {
			case History, Branch:
				f.c.Kind = k
			default:
				return f.errAt(it, "kind is %q or %q, not %q", History, Branch, it.value)
			}
		case "keep":
			if it.value == "last" {
				f.c.KeepLast = true
				break
			}
			n, err := strconv.Atoi(it.value)
			if err != nil || n <= 0 {
				return f.errAt(it, "keep is \"last\" or a number of tokens, not %q", it.value)
			}
			f.c.Keep = n
		case "target":
			f.c.Target = it.value
		}
	}
	if !seen["case"] && !seen["session"] {
		return f.errAt(f.head, "the file starts with \"case NAME\" or \"session NAME\"")
	}
	return nil
}

// fields takes the items after the current one whose keys the directive at owner takes.
func (f *file) fields(owner item, names []string) (map[string][]item, error) {
	got := map[string][]item{}
	for f.i < len(f.items) {
		it := f.items[f.i]
		repeat, ok := false, false
		for _, n := range names {
			if n == it.key || n == it.key+"*" {
				ok, repeat = true, n != it.key
			}
		}
		if !ok {
			break
		}
		if len(got[it.key]) > 0 && !repeat {
			return nil, f.errAt(it, "%s twice for the %s on line %d", it.key, owner.key, owner.line)
		}
		got[it.key] = append(got[it.key], it)
		f.i++
	}
	return got, nil
}

func value(fs map[string][]item, key string) string {
	if len(fs[key]) == 0 {
		return ""
	}
	return fs[key][0].value
}

func values(fs map[string][]item, key string) []string {
	var out []string
	for _, it := range fs[key] {
		out = append(out, it.value)
	}
	return out
}

// number is the whole number of field key (def when it is absent).
func (f *file) number(fs map[string][]item, key string, def int) (int, error) {
	if len(fs[key]) == 0 {
		return def, nil
	}
	it := fs[key][0]
	n, err := strconv.Atoi(it.value)
	if err != nil {
		return 0, f.errAt(it, "%s is a whole number, not %q", key, it.value)
	}
	return n, nil
}

func (f *file) step(st func(*Script)) { f.steps = append(f.steps, st) }

func (f *file) mark(it item) error {
	if !f.marks[it.value] {
		return f.errAt(it, "no mark %q before this line", it.value)
	}
	return nil
}

func (f *file) turn(it item) error {
	names, ok := turnFields[it.key]
	if !ok {
		if _, call := callFields[it.key]; call {
			return f.errAt(it, "a %s call belongs to a do or abort turn", it.key)
		}
		return f.errAt(it, "unknown keyword %q", it.key)
	}
	t := it.value
	needsValue := it.key != "do" && it.key != "abort"
	if needsValue && t == "" {
		return f.errAt(it, "%s needs a value", it.key)
	}
	fs, err := f.fields(it, names)
	if err != nil {
		return err
	}
	switch it.key {
	case "user":
		f.step(func(s *Script) { s.User(t) })
	case "say":
		f.step(func(s *Script) { s.Say(t) })
	case "fail":
		f.step(func(s *Script) { s.Fail(t) })
	case "mark":
		f.marks[t] = true
		f.step(func(s *Script) { s.Mark(t) })
	case "from":
		if err := f.mark(it); err != nil {
			return err
		}
		f.step(func(s *Script) { s.From(t) })
	case "shell":
		code, err := f.number(fs, "exit", 0)
		if err != nil {
			return err
		}
		out := value(fs, "out")
		f.step(func(s *Script) { s.Shell(t, out, code) })
	case "note":
		content := value(fs, "content")
		f.step(func(s *Script) { s.Note(t, content) })
	case "compaction", "branch-summary":
		if err := f.mark(it); err != nil {
			return err
		}
		summary, read, modified := value(fs, "summary"), values(fs, "read-file"), values(fs, "modified-file")
		if it.key == "compaction" {
			f.step(func(s *Script) { s.Compaction(summary, t, read, modified) })
		} else {
			f.step(func(s *Script) { s.BranchSummary(summary, t, read, modified) })
		}
	case "do", "abort":
		calls, err := f.calls()
		if err != nil {
			return err
		}
		if it.key == "do" {
			f.step(func(s *Script) { s.Do(t, append([]Call(nil), calls...)...) })
		} else {
			f.step(func(s *Script) { s.Abort(t, append([]Call(nil), calls...)...) })
		}
	}
	return nil
}

// calls reads the tool calls of a do or abort turn.
func (f *file) calls() ([]Call, error) {
	var calls []Call
	for f.i < len(f.items) {
		it := f.items[f.i]
		names, ok := callFields[it.key]
		if !ok {
			break
		}
		f.i++
		if it.value == "" {
			return nil, f.errAt(it, "%s needs a value", it.key)
		}
		fs, err := f.fields(it, names)
		if err != nil {
			return nil, err
		}
		c, err := f.call(it, fs)
		if err != nil {
			return nil, err
		}
		if p := fs["pending"]; len(p) > 0 {
			if p[0].value != "" {
				return nil, f.errAt(p[0], "pending takes no value")
			}
			c = Pending(c)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

func (f *file) call(it item, fs map[string][]item) (Call, error) {
	v := it.value
	switch it.key {
	case "sh":
		return Sh(v, value(fs, "out")), nil
	case "shfail":
		if len(fs["exit"]) == 0 {
			return Call{}, f.errAt(it, "shfail needs its exit code (exit N)")
		}
		code, err := f.number(fs, "exit", 0)
		if err != nil {
			return Call{}, err
		}
		return ShFail(v, value(fs, "out"), code), nil
	case "read":
		if len(fs["offset"]) != len(fs["limit"]) {
			return Call{}, f.errAt(it, "a read of part of a file has both offset and limit")
		}
		if len(fs["offset"]) == 0 {
			return Read(v, value(fs, "content")), nil
		}
		offset, err := f.number(fs, "offset", 0)
		if err != nil {
			return Call{}, err
		}
		limit, err := f.number(fs, "limit", 0)
		if err != nil {
			return Call{}, err
		}
		return ReadRange(v, offset, limit, value(fs, "content")), nil
	case "read-missing":
		return ReadMissing(v, value(fs, "abs")), nil
	case "edit":
		return Edit(v, value(fs, "old"), value(fs, "new")), nil
	case "edit-miss":
		return EditMiss(v, value(fs, "old"), value(fs, "new")), nil
	case "write":
		return Write(v, value(fs, "content")), nil
	default: // tool
		if len(fs["result"]) > 0 && len(fs["error"]) > 0 {
			return Call{}, f.errAt(it, "a tool call has a result or an error, not both")
		}
		var args []kv
		if a := fs["args"]; len(a) > 0 {
			var err error
			if args, err = orderedObject(a[0].value); err != nil {
				return Call{}, f.errAt(a[0], "args: %v", err)
			}
		}
		if e := fs["error"]; len(e) > 0 {
			return Tool(v, args, e[0].value, true), nil
		}
		return Tool(v, args, value(fs, "result"), false), nil
	}
}

func (f *file) expect(at item) error {
	if f.hasExpect {
		return f.errAt(at, "expect twice")
	}
	f.hasExpect = true
	fs, err := f.fields(at, expectFields)
	if err != nil {
		return err
	}
	if f.i < len(f.items) {
		it := f.items[f.i]
		return f.errAt(it, "%q is not a field of expect (the expect section ends the file)", it.key)
	}
	f.c.Want = Expect{
		Goal: values(fs, "goal"), Latest: value(fs, "latest"), Constraints: values(fs, "constraint"),
		Done: values(fs, "done"), InProgress: values(fs, "in-progress"), Blocked: values(fs, "blocked"),
		Next: values(fs, "next"), Stale: values(fs, "stale"), Entities: values(fs, "entity"),
		Noise: values(fs, "noise"), ReadFiles: values(fs, "read-file"), ModifiedFiles: values(fs, "modified-file"),
	}
	return nil
}

// orderedObject decodes a JSON object keeping its members' order (a tool's arguments are
// written in the order they were given); numbers are float64s, as JSON.parse reads them.
func orderedObject(text string) ([]kv, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	v, err := orderedValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text after the object")
	}
	o, ok := v.(object)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return o, nil
}

func orderedValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := orderedValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, kv{k.(string), v})
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := orderedValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return tok, nil
}
