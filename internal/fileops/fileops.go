// Package fileops tracks which files the agent read and modified through its tool calls
// (read, write and edit, matched exactly as Pi 1.6.0 matches them), accumulates them
// across earlier summaries, and formats them as Pi's <read-files>/<modified-files> blocks.
//
// Invariant: a file that was modified anywhere in a set of operations is listed as
// modified and never as read, and lists are sorted as JavaScript sorts strings (UTF-16).
package fileops

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Ops is Pi's FileOperations: the paths read, written and edited.
type Ops struct {
	Read, Written, Edited pathSet
}

// New returns empty operations.
func New() *Ops { return &Ops{} }

// AddMessage is Pi's extractFileOpsFromMessage: tool calls named exactly read, write or
// edit with a non-empty string path argument, those of an assistant message and those
// a codemode script made, recorded on its toolResult (nestedCalls).
func (o *Ops) AddMessage(m *session.Message) {
	for _, c := range callsOf(m) {
		o.add(c)
	}
}

// AddMessages is AddMessage for each of ms, for the long lists a compaction summarizes
// (one visit of each message: the sets grow by moving their slots, not their paths).
func (o *Ops) AddMessages(ms []*session.Message) {
	for _, m := range ms {
		for _, c := range callsOf(m) {
			o.add(c)
		}
	}
}

// add records one call.
func (o *Ops) add(c session.ToolCall) {
	if c.Path == "" {
		return
	}
	var set *pathSet
	switch c.Name {
	case "read":
		set = &o.Read
	case "write":
		set = &o.Written
	case "edit":
		set = &o.Edited
	default:
		return
	}
	set.add(c.Path, hashPath(c.Path))
}

// callsOf are the tool calls AddMessage looks at.
func callsOf(m *session.Message) []session.ToolCall {
	if m == nil {
		return nil
	}
	switch m.Role {
	case session.RoleAssistant:
		return m.ToolCalls()
	case session.RoleToolResult:
		return m.NestedCalls()
	}
	return nil
}

// AddDetails merges the file lists stored in an earlier summary's details: read files as
// read, modified files as edited (so they never move back to read).
func (o *Ops) AddDetails(d session.FileDetails) {
	for _, f := range d.ReadFiles {
		o.Read.addString(f)
	}
	for _, f := range d.ModifiedFiles {
		o.Edited.addString(f)
	}
}

// Lists is Pi's computeFileLists: files only read, and files modified, each sorted.
func (o *Ops) Lists() (readFiles, modifiedFiles []string) {
	var modified pathSet
	modified.reserve(o.Edited.Len() + o.Written.Len())
	for _, p := range o.Edited.paths {
		modified.add(p.path, p.hash)
	}
	for _, p := range o.Written.paths {
		modified.add(p.path, p.hash)
	}
	readFiles = []string{}
	for _, p := range o.Read.paths {
		if !modified.has(p.path, p.hash) {
			readFiles = append(readFiles, p.path)
		}
	}
	modifiedFiles = make([]string, 0, modified.Len())
	for _, p := range modified.paths {
		modifiedFiles = append(modifiedFiles, p.path)
	}
	SortJS(readFiles)
	SortJS(modifiedFiles)
	return readFiles, modifiedFiles
}

// SortJS sorts strings by UTF-16 code units, as Array.prototype.sort does by default.
func SortJS(s []string) {
	// Byte order is UTF-16 order for strings of ASCII: one look at every string saves
	// one in every comparison.
	for _, x := range s {
		if !isASCII(x) {
			sort.Slice(s, func(i, j int) bool { return lessUTF16(s[i], s[j]) })
			return
		}
	}
	slices.Sort(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func lessUTF16(a, b string) bool {
	// Byte order equals UTF-16 order unless a supplementary-plane character meets one
	// in U+E000..U+FFFF; compare exactly only when non-ASCII bytes are present.
	ascii := true
	for i := 0; i < len(a) && ascii; i++ {
		ascii = a[i] < 0x80
	}
	for i := 0; i < len(b) && ascii; i++ {
		ascii = b[i] < 0x80
	}
	if ascii {
		return a < b
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// Format is Pi's formatFileOperations: "" when both lists are empty, otherwise the
// blocks preceded by a blank line.
func Format(readFiles, modifiedFiles []string) string {
	var sections []string
	if len(readFiles) > 0 {
		sections = append(sections, "<read-files>\n"+strings.Join(readFiles, "\n")+"\n</read-files>")
	}
	if len(modifiedFiles) > 0 {
		sections = append(sections, "<modified-files>\n"+strings.Join(modifiedFiles, "\n")+"\n</modified-files>")
	}
	if len(sections) == 0 {
		return ""
	}
	return "\n\n" + strings.Join(sections, "\n\n")
}

// DefaultMaxListed bounds each list in summary text (design divergence 7).
const DefaultMaxListed = 50

// FormatBounded is Format with each list cut to max entries, most recent first, plus a
// "(+N more)" line; recent lists the paths in order of last use (newest last). Entries
// missing from recent keep their sorted order after the recent ones. The summary
// entry's details keep the full lists.
func FormatBounded(readFiles, modifiedFiles []string, recent []string, max int) string {
	if max <= 0 || (len(readFiles) <= max && len(modifiedFiles) <= max) {
		return Format(readFiles, modifiedFiles)
	}
	return Format(bound(readFiles, recent, max), bound(modifiedFiles, recent, max))
}

func bound(list, recent []string, max int) []string {
	if len(list) <= max {
		return list
	}
	in := map[string]bool{}
	for _, f := range list {
		in[f] = true
	}
	var out []string
	seen := map[string]bool{}
	for i := len(recent) - 1; i >= 0 && len(out) < max; i-- {
		f := recent[i]
		if in[f] && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, f := range list {
		if len(out) >= max {
			break
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return append(out, fmt.Sprintf("(+%d more)", len(list)-len(out)))
}

// Recent lists the paths touched by read/write/edit tool calls in messages, in order of
// last use (oldest first).
func Recent(messages []*session.Message) []string {
	var out []string
	for _, m := range messages {
		if m == nil {
			continue
		}
		calls := m.ToolCalls()
		if m.Role == session.RoleToolResult {
			calls = m.NestedCalls()
		} else if m.Role != session.RoleAssistant {
			continue
		}
		for _, c := range calls {
			switch c.Name {
			case "read", "write", "edit":
				if c.Path != "" {
					out = append(out, c.Path)
				}
			}
		}
	}
	return out
}

// ForPath returns the files read and modified along a root-first path: the details of
// every compaction and branch summary on it (unless written by an extension), plus
// every tool call of its messages (design divergence 6: both kinds accumulate).
func ForPath(path []*session.Entry) (readFiles, modifiedFiles []string) {
	o := New()
	for _, e := range path {
		switch e.Type {
		case session.TypeCompaction:
			if c := e.Compaction(); !c.FromHook && c.Details.Present {
				o.AddDetails(c.Details)
			}
		case session.TypeBranchSummary:
			if b := e.BranchSummary(); !b.FromHook && b.Details.Present {
				o.AddDetails(b.Details)
			}
		case session.TypeMessage:
			if m, err := e.Message(); err == nil {
				o.AddMessage(m)
			}
		}
	}
	return o.Lists()
}
