package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// InspectResult is what the real Pi CLI (`pi --mode rpc --session <copy>`)
// reports after opening a copy of a session file (test/pi/rpc-inspect.mjs).
type InspectResult struct {
	File         string         `json:"file"`
	Roles        []string       `json:"roles"`
	MessageCount int            `json:"messageCount"`
	State        map[string]any `json:"state"`
	Stats        map[string]any `json:"stats"`
	// ReplacedCwd is the header cwd that did not exist: real Pi refuses such
	// a session, so the copy's cwd value was replaced by a private directory.
	ReplacedCwd *string `json:"replacedCwd"`
	// CopyRewritten: opening the file changed it (migration, header recovery,
	// or entries Pi appends on resume such as thinking_level_change).
	CopyRewritten bool `json:"copyRewritten"`
	// AppendedTypes: entry types appended after the original bytes, or nil
	// when Pi rewrote the file as a whole.
	AppendedTypes []string `json:"appendedTypes"`
	// Request is what Pi sent to the model for InspectPrompt's message.
	Request *InspectRequest `json:"request"`
}

// RedeclaredTools lists the system messages Pi appended for the prompt that declare tools
// (toolsAdded): none when the session's own system state (a compaction's checkpoint
// included) already held them all.
func (r *InspectRequest) RedeclaredTools() []json.RawMessage {
	var out []json.RawMessage
	for _, a := range r.Appended {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role       string            `json:"role"`
				ToolsAdded []json.RawMessage `json:"toolsAdded"`
			} `json:"message"`
		}
		if json.Unmarshal(a, &e) == nil && e.Type == "message" && e.Message.Role == "system" && len(e.Message.ToolsAdded) > 0 {
			out = append(out, a)
		}
	}
	return out
}

// InspectRequest is a chat request as the fake server received it: the system prompt
// text, the tool names and the chat messages (role and text).
type InspectRequest struct {
	System   string   `json:"system"`
	Tools    []string `json:"tools"`
	Messages []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"messages"`
	// Appended are the entries Pi appended to the file for the prompt.
	Appended []json.RawMessage `json:"appended"`
}

// Inspect opens a copy of file in the real Pi CLI (RPC mode, offline against
// a private fake server) and reports what Pi loaded: the acceptance check
// "real Pi loads what we wrote". It needs node and the installed Pi; without
// them the test is skipped (or fails when PI_LSP_REQUIRE_ORACLE=1). Each call
// starts a Pi process (about 2 s). Inspect runs the reference Pi (1.6.0),
// InspectLegacy Pi 0.73.1.
func Inspect(t testing.TB, file string) InspectResult {
	t.Helper()
	return reference.inspect(t, file, "")
}

// InspectPrompt is Inspect, then the user's next message: prompt is sent to the real Pi
// 1.6.0 CLI, and the result's Request is what Pi sent to the model for it.
func InspectPrompt(t testing.TB, file, prompt string) InspectResult {
	t.Helper()
	return reference.inspect(t, file, prompt)
}

// InspectLegacy is Inspect with Pi 0.73.1.
func InspectLegacy(t testing.TB, file string) InspectResult {
	t.Helper()
	return legacy.inspect(t, file, "")
}

func (f *flavor) inspect(t testing.TB, file, prompt string) InspectResult {
	t.Helper()
	why := f.liveUnavailable()
	if why == "" && os.Getenv("PI_LSP_ORACLE_OFFLINE") == "1" {
		why = "PI_LSP_ORACLE_OFFLINE=1"
	}
	if why != "" {
		if os.Getenv("PI_LSP_REQUIRE_ORACLE") == "1" {
			t.Fatalf("oracle: Inspect needs the real Pi CLI, but %s (PI_LSP_REQUIRE_ORACLE=1)", why)
		}
		t.Skipf("oracle: Inspect needs the real Pi CLI, but %s", why)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	args := []string{filepath.Join(RepoRoot(), "test", "pi", "rpc-inspect.mjs"), abs}
	if prompt != "" {
		args = append(args, "--prompt", prompt)
	}
	cmd := exec.CommandContext(ctx, f.node(), args...)
	cmd.Dir = tmp
	cmd.Env = append(isolatedEnv(tmp), "PI_LSP_PI_DIR="+f.piDir())
	setProcessGroup(cmd)
	cmd.Cancel = func() error {
		killProcessGroup(cmd)
		return nil
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err = cmd.Run()
	killProcessGroup(cmd) // nothing of it may outlive the call
	if err != nil {
		t.Fatalf("oracle: rpc-inspect (%s) %s: %v\n%s", f.name, abs, err, stderr.String())
	}
	var res InspectResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("oracle: rpc-inspect output %q: %v", truncate(stdout.String(), 300), err)
	}
	return res
}
