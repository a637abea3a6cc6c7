package quality

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/quality/jsonobj"
)

// Script writes a Pi session file (version 3, as Pi 1.6.0 writes one) from a few calls:
// user messages, assistant messages with their tool calls, the tools' results, user
// bash commands, extension messages, compactions and branch summaries, on one branch or
// several. Ids and timestamps are derived from the case's name, so the same script
// always gives the same bytes.
type Script struct {
	name   string
	cwd    string
	lines  [][]byte
	parent string
	n      int
	calls  int
	marks  map[string]string
	last   string
	clock  time.Time
	tokens int // a running input-token figure for the assistants' usage
}

// NewScript starts a session of the named case, in the project directory cwd.
func NewScript(name, cwd string) *Script {
	s := &Script{name: name, cwd: cwd, marks: map[string]string{}, clock: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC), tokens: 2400}
	h := fnv.New64a()
	h.Write([]byte(name))
	sum := h.Sum64()
	id := fmt.Sprintf("019a%04x-%04x-7%03x-9%03x-%012x", sum>>48&0xffff, sum>>32&0xffff, sum>>20&0xfff, sum>>8&0xfff, sum&0xffffffffffff)
	s.raw(kv{"type", "session"}, kv{"version", 3}, kv{"id", id}, kv{"timestamp", s.stamp()}, kv{"cwd", cwd})
	s.entry("model_change", kv{"provider", "anthropic"}, kv{"modelId", "claude-sonnet-4-5"})
	s.entry("thinking_level_change", kv{"thinkingLevel", "medium"})
	return s
}

// kv is one member of a JSON object, written in order.
type kv struct {
	k string
	v any
}

type object []kv

func (o object) MarshalJSON() ([]byte, error) {
	return jsonobj.Write(o, func(m kv) (string, any) { return m.k, m.v })
}

// marshal is json.Marshal without HTML escaping (Pi writes < > & as they are).
func marshal(v any) ([]byte, error) { return jsonobj.Marshal(v) }

func (s *Script) stamp() string {
	s.clock = s.clock.Add(time.Duration(3+s.n%7) * time.Second)
	return s.clock.Format("2006-01-02T15:04:05.000Z")
}

func (s *Script) millis() int64 { return s.clock.UnixMilli() }

func (s *Script) raw(members ...kv) {
	b, err := marshal(object(members))
	if err != nil {
		panic(err)
	}
	s.lines = append(s.lines, b)
}

func (s *Script) newID() string {
	s.n++
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", s.name, s.n)
	return fmt.Sprintf("%08x", h.Sum32())
}

// entry appends an entry of type typ after the current one and makes it current.
func (s *Script) entry(typ string, members ...kv) string {
	id := s.newID()
	var parent any
	if s.parent != "" {
		parent = s.parent
	}
	head := []kv{{"type", typ}, {"id", id}, {"parentId", parent}, {"timestamp", s.stamp()}}
	s.raw(append(head, members...)...)
	s.parent, s.last = id, id
	return id
}

func text(t string) []any { return []any{object{{"type", "text"}, {"text", t}}} }

func (s *Script) message(m object) string { return s.entry("message", kv{"message", m}) }

// User appends a user message.
func (s *Script) User(t string) *Script {
	s.message(object{{"role", "user"}, {"content", text(t)}, {"timestamp", s.millis()}})
	return s
}

// Say appends an assistant message with text only (a final answer).
func (s *Script) Say(t string) *Script { return s.assistant(t, "stop", "", nil) }

// Do appends an assistant message with text (may be empty) and tool calls, then a tool
// result for each call that has one, in order.
func (s *Script) Do(t string, calls ...Call) *Script { return s.assistant(t, "toolUse", "", calls) }

// Fail appends an assistant message that ended in a provider error.
func (s *Script) Fail(errorMessage string) *Script {
	return s.assistant("", "error", errorMessage, nil)
}

// Abort appends an assistant message the user interrupted, with what it had written.
func (s *Script) Abort(t string, calls ...Call) *Script {
	for i := range calls {
		calls[i].NoResult = true
	}
	return s.assistant(t, "aborted", "", calls)
}

func (s *Script) assistant(t, stop, errMsg string, calls []Call) *Script {
	var content []any
	if t != "" {
		content = append(content, object{{"type", "text"}, {"text", t}})
	}
	ids := make([]string, len(calls))
	for i, c := range calls {
		s.calls++
		ids[i] = fmt.Sprintf("toolu_%02d%s", s.calls, shortHash(s.name, s.calls))
		content = append(content, object{{"type", "toolCall"}, {"id", ids[i]}, {"name", c.Name}, {"arguments", object(c.Args)}})
	}
	if content == nil {
		content = []any{}
	}
	out := 40 + len(t)/4
	s.tokens += out + 300
	m := object{{"role", "assistant"}, {"content", content}, {"api", "anthropic-messages"}, {"provider", "anthropic"},
		{"model", "claude-sonnet-4-5"},
		{"usage", object{{"input", s.tokens}, {"output", out}, {"cacheRead", 0}, {"cacheWrite", 0}, {"totalTokens", s.tokens + out},
			{"cost", object{{"input", 0}, {"output", 0}, {"cacheRead", 0}, {"cacheWrite", 0}, {"total", 0}}}}},
		{"stopReason", stop}}
	if errMsg != "" {
		m = append(m, kv{"errorMessage", errMsg})
	}
	m = append(m, kv{"timestamp", s.millis()})
	s.message(m)
	for i, c := range calls {
		if c.NoResult {
			continue
		}
		r := object{{"role", "toolResult"}, {"toolCallId", ids[i]}, {"toolName", c.Name}, {"content", text(c.Result)}}
		if c.Details != nil {
			r = append(r, kv{"details", c.Details})
		}
		r = append(r, kv{"isError", c.IsError}, kv{"timestamp", s.millis()})
		s.message(r)
	}
	return s
}

func shortHash(name string, n int) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s#%d", name, n)
	return fmt.Sprintf("%06x", h.Sum32()&0xffffff)
}

// Shell appends a command the user ran with Pi's ! prefix (a bashExecution message).
func (s *Script) Shell(command, output string, exitCode int) *Script {
	s.message(object{{"role", "bashExecution"}, {"command", command}, {"output", output}, {"exitCode", exitCode},
		{"cancelled", false}, {"truncated", false}, {"timestamp", s.millis()}})
	return s
}

// Note appends an extension's message (a custom_message entry in the context).
func (s *Script) Note(customType, content string) *Script {
	s.entry("custom_message", kv{"customType", customType}, kv{"content", content}, kv{"display", true})
	return s
}

// Mark names the current entry, for From, Compaction and a branch case's target.
func (s *Script) Mark(name string) *Script {
	s.marks[name] = s.last
	return s
}

// ID is the id of a marked entry.
func (s *Script) ID(mark string) string {
	id, ok := s.marks[mark]
	if !ok {
		panic("quality: no mark " + mark + " in " + s.name)
	}
	return id
}

// From makes the next entry a child of the marked one (a new branch of the tree).
func (s *Script) From(mark string) *Script {
	s.parent = s.ID(mark)
	return s
}

// Compaction appends a compaction entry keeping the context from the marked entry, with
// the summary an earlier compaction wrote (its file blocks included) and its details.
func (s *Script) Compaction(summary, firstKept string, read, modified []string) *Script {
	s.entry("compaction", kv{"summary", summary}, kv{"firstKeptEntryId", s.ID(firstKept)}, kv{"tokensBefore", s.tokens},
		kv{"details", fileDetails(read, modified)}, kv{"fromHook", false})
	return s
}

// BranchSummary appends a branch summary of a branch left at the marked entry.
func (s *Script) BranchSummary(summary, from string, read, modified []string) *Script {
	s.entry("branch_summary", kv{"fromId", s.ID(from)}, kv{"summary", summary},
		kv{"details", fileDetails(read, modified)}, kv{"fromHook", false})
	return s
}

// fileDetails is the details of a compaction or branch summary: its file lists, written
// as [] when empty (Pi writes arrays, never null).
func fileDetails(read, modified []string) object {
	if read == nil {
		read = []string{}
	}
	if modified == nil {
		modified = []string{}
	}
	return object{{"readFiles", read}, {"modifiedFiles", modified}}
}

// Bytes is the session file.
func (s *Script) Bytes() []byte {
	var b bytes.Buffer
	for _, l := range s.lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Call is one tool call of an assistant message and the result the tool gave.
type Call struct {
	Name     string
	Args     []kv
	Result   string
	IsError  bool
	Details  any
	NoResult bool // the call never got a result (the session ends, or the turn was cut)
}

// Read is a read of a file that returned its content.
func Read(path, content string) Call {
	return Call{Name: "read", Args: []kv{{"path", path}}, Result: content}
}

// ReadRange is a read of part of a file.
func ReadRange(path string, offset, limit int, content string) Call {
	return Call{Name: "read", Args: []kv{{"path", path}, {"offset", offset}, {"limit", limit}}, Result: content}
}

// ReadMissing is a read of a file that does not exist.
func ReadMissing(path, abs string) Call {
	return Call{Name: "read", Args: []kv{{"path", path}}, Result: "ENOENT: no such file or directory, access '" + abs + "'", IsError: true}
}

// Edit is a successful edit replacing old by new in path.
func Edit(path, old, new string) Call {
	return Call{Name: "edit", Args: []kv{{"path", path}, {"edits", []any{object{{"oldText", old}, {"newText", new}}}}},
		Result:  "Successfully replaced 1 block(s) in " + path + ".",
		Details: object{{"diff", diffOf(old, new)}, {"firstChangedLine", 1 + len(old)%40}}}
}

// EditMiss is an edit whose old text was not in the file.
func EditMiss(path, old, new string) Call {
	return Call{Name: "edit", Args: []kv{{"path", path}, {"edits", []any{object{{"oldText", old}, {"newText", new}}}}},
		Result:  "Could not find the exact text in " + path + ". The old text must match exactly including all whitespace and newlines.",
		IsError: true}
}

func diffOf(old, new string) string {
	var b strings.Builder
	for i, l := range strings.Split(old, "\n") {
		fmt.Fprintf(&b, "-%d %s\n", i+1, l)
	}
	for i, l := range strings.Split(new, "\n") {
		fmt.Fprintf(&b, "+%d %s\n", i+1, l)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Write is a successful write of content to path.
func Write(path, content string) Call {
	return Call{Name: "write", Args: []kv{{"path", path}, {"content", content}},
		Result: fmt.Sprintf("Successfully wrote %d bytes to %s", len(content), path)}
}

// Sh is a bash command that exited 0 with output.
func Sh(command, output string) Call {
	if output == "" {
		output = "(no output)"
	}
	return Call{Name: "bash", Args: []kv{{"command", command}}, Result: output}
}

// ShFail is a bash command that exited with code (not 0) after printing output.
func ShFail(command, output string, code int) Call {
	r := fmt.Sprintf("Command exited with code %d", code)
	if output != "" {
		r = strings.TrimRight(output, "\n") + "\n\n" + r
	}
	return Call{Name: "bash", Args: []kv{{"command", command}}, Result: r, IsError: true}
}

// Tool is a call of another tool (an extension's), with its arguments and result.
func Tool(name string, args []kv, result string, isError bool) Call {
	return Call{Name: name, Args: args, Result: result, IsError: isError}
}

// Pending is c without a result.
func Pending(c Call) Call {
	c.NoResult = true
	return c
}

// Arg is one argument of a Tool call.
func Arg(k string, v any) kv { return kv{k, v} }
