package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// Every command that writes, run under a file-size limit (RLIMIT_FSIZE, what
// `prlimit --fsize` sets) that lets its entry only partly in, fails with the kernel's
// "file too large" and leaves the session byte-identical: no half line for a running
// pi to glue its next entry onto.
func TestWritesPastTheFileSizeLimitLeaveTheSessionIdentical(t *testing.T) {
	path := isolatedCopy(t, "genuine/auto-threshold.jsonl")
	target := contextSize(t, path).first(func(m sizedMessage) bool { return m.Editable })
	if target == "" {
		t.Fatal("no editable message")
	}
	cases := []struct {
		name string
		args []string
	}{
		{"compact", []string{"compact", path, "--keep-recent", "15", "--force"}},
		{"label", []string{"label", path, target, strings.Repeat("a label ", 40), "--force"}},
		{"edit-context", []string{"edit-context", path, target, "--replace", strings.Repeat("trimmed ", 60), "--force"}},
	}
	for _, c := range cases {
		for _, room := range []int{0, 60, 200} {
			t.Run(fmt.Sprintf("%s/+%d", c.name, room), func(t *testing.T) {
				before, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				code, out := runWithFileSizeLimit(t, int64(len(before)+room), c.args)
				if code != 1 || !strings.Contains(out, "file too large") {
					t.Fatalf("exit %d, want 1 with \"file too large\":\n%s", code, out)
				}
				after, _ := os.ReadFile(path)
				if !bytes.Equal(before, after) {
					t.Fatalf("the session changed by %d bytes: %q", len(after)-len(before), after[min(len(before), len(after)):])
				}
			})
		}
	}
	// Without the limit the same commands write.
	code, _, stderr := runCLI(t, "label", path, target, "kept", "--force")
	if code != 0 {
		t.Fatalf("label without a limit: exit %d: %s", code, stderr)
	}
}

// runWithFileSizeLimit runs the CLI in a child (this test binary, re-executed) whose
// file-size limit is limit bytes, and returns its exit code and output.
func runWithFileSizeLimit(t *testing.T, limit int64, args []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	enc, _ := json.Marshal(args)
	cmd := isolate.GroupCmd(ctx, os.Args[0], "-test.run=^TestHelperLimitedCLI$")
	cmd.Env = append(os.Environ(), "PI_LSP_TEST_CLI_ARGS="+string(enc), "PI_LSP_TEST_FSIZE="+strconv.FormatInt(limit, 10))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	_ = isolate.KillGroup(cmd)
	return isolate.ExitCode(err), out.String()
}

// TestHelperLimitedCLI is the child of TestWritesPastTheFileSizeLimitLeaveTheSessionIdentical.
func TestHelperLimitedCLI(t *testing.T) {
	raw := os.Getenv("PI_LSP_TEST_CLI_ARGS")
	if raw == "" {
		t.Skip("helper process only")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	limit, _ := strconv.ParseUint(os.Getenv("PI_LSP_TEST_FSIZE"), 10, 64)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
}
