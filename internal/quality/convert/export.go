package convert

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

var (
	exportHeadRe = regexp.MustCompile(`(?m)^### (User|Assistant)\n> ([^\n]*)\n\n`)
	exportCwdRe  = regexp.MustCompile("(?m)^- \\*\\*Project Path\\*\\*: `([^`]*)`")
)

// ClaudeExport converts a Markdown export of a Claude Code session ("# Claude Session
// Export": a "### User" or "### Assistant" heading per record, its date quoted under it,
// then either plain text or the record's content blocks as a JSON array, records
// separated by a "---" rule).
func ClaudeExport(name string, data []byte) (*Session, error) {
	doc := string(data)
	if !strings.HasPrefix(doc, "# Claude Session Export") {
		return nil, fmt.Errorf("%s: not a Claude session export", name)
	}
	b := newBuilder(name)
	if m := exportCwdRe.FindStringSubmatch(doc); m != nil {
		b.s.Cwd = m[1]
	}
	heads := exportHeadRe.FindAllStringSubmatchIndex(doc, -1)
	for i, h := range heads {
		end := len(doc)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		body := strings.TrimSpace(doc[h[1]:end])
		body = strings.TrimSpace(strings.TrimSuffix(body, "---"))
		role := doc[h[2]:h[3]]
		at, _ := time.Parse("1/2/2006, 3:04:05 PM", doc[h[4]:h[5]])
		var content any = body
		if strings.HasPrefix(body, "[") {
			var blocks []any
			if err := json.Unmarshal([]byte(body), &blocks); err == nil {
				content = blocks
			}
		}
		if role == "User" {
			b.user(content, at)
		} else {
			b.assistant(content, at)
		}
	}
	s := b.finish()
	if len(s.Messages) == 0 {
		return nil, fmt.Errorf("%s: no conversation in the export", name)
	}
	return s, nil
}

// Any converts data by its shape: a Pi session file is kept with its strings redacted, a
// Claude Code export or transcript is converted.
func Any(name string, data []byte) ([]byte, error) {
	trim := strings.TrimSpace(string(data))
	switch {
	case strings.HasPrefix(trim, "# Claude Session Export"):
		s, err := ClaudeExport(name, data)
		if err != nil {
			return nil, err
		}
		return s.Bytes(), nil
	case strings.HasPrefix(trim, `{"type":"session"`):
		return redactLines(data)
	case strings.HasPrefix(trim, "{"):
		s, err := ClaudeJSONL(name, data)
		if err != nil {
			return nil, err
		}
		return s.Bytes(), nil
	}
	return nil, fmt.Errorf("%s: unknown transcript format", name)
}

// redactLines redacts every string of a Pi session file, line by line.
func redactLines(data []byte) ([]byte, error) {
	var out []byte
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		b, err := marshalPlain(redactAny(v))
		if err != nil {
			return nil, err
		}
		out = append(append(out, b...), '\n')
	}
	return out, nil
}
