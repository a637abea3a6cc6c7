// Package isolate points every directory Pi or pi-lsp might read or write at a test's
// temp dirs: $HOME, the four XDG base dirs and Pi's agent dir, and clears every pi-lsp
// summarizer setting and API key from the environment. The processes a test starts run
// in their own process group (GroupCmd), so nothing they start outlives the test.
//
// Invariant: after Setup, nothing the test or a process it starts (children inherit the
// environment) does through these variables touches the real $HOME, and no setting of
// the machine's user leaks into the test. The variables are set with t.Setenv, so they
// are restored when the test ends and the test cannot be parallel.
//
// Import it only from _test.go files.
package isolate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dirs are the temp dirs of one isolated test.
type Dirs struct {
	Root     string // everything below lives here
	Home     string
	AgentDir string // PI_CODING_AGENT_DIR
	// XDG maps each XDG base-dir variable (XDG_CONFIG_HOME, ...) to its dir.
	XDG map[string]string
}

// xdgVars are the base dirs of the XDG spec that Pi, Node and pi-lsp consult.
var xdgVars = []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"}

// clearedVars are pi-lsp's summarizer settings and the key it may fall back to: a
// developer's own configuration must not change what a test sees.
var clearedVars = []string{"PI_LSP_SUMMARIZER", "PI_LSP_BASE_URL", "PI_LSP_MODEL", "PI_LSP_API_KEY_ENV", "OPENAI_API_KEY"}

// Setup isolates the test under a fresh temp dir, with the agent dir at Root/agent.
func Setup(t testing.TB) Dirs {
	t.Helper()
	root := t.TempDir()
	return Under(t, root, filepath.Join(root, "agent"))
}

// Under isolates the test under root with the given agent dir (a harness that lays out
// its own tree chooses both), creates every dir and returns them.
func Under(t testing.TB, root, agentDir string) Dirs {
	t.Helper()
	d := Layout(root, agentDir)
	t.Setenv("HOME", d.Home)
	t.Setenv("PI_CODING_AGENT_DIR", d.AgentDir)
	for v, dir := range d.XDG {
		t.Setenv(v, dir)
	}
	for _, v := range clearedVars {
		t.Setenv(v, "")
	}
	d.mkdirs(t)
	return d
}

// Layout names the dirs below root without touching the environment or the disk, for
// a test that hands them to a child process only (see Env).
func Layout(root, agentDir string) Dirs {
	d := Dirs{Root: root, Home: filepath.Join(root, "home"), AgentDir: agentDir, XDG: map[string]string{}}
	for _, v := range xdgVars {
		d.XDG[v] = filepath.Join(root, "xdg", strings.ToLower(strings.TrimPrefix(v, "XDG_")))
	}
	return d
}

// Child creates the dirs of Layout(root, agentDir) and returns them, leaving the test's
// own environment alone: for a test that isolates only the processes it starts.
func Child(t testing.TB, root, agentDir string) Dirs {
	t.Helper()
	d := Layout(root, agentDir)
	d.mkdirs(t)
	return d
}

// Env is the environment variables of d, as KEY=VALUE, for a child process: append
// them to a base such as PATH (the later of two equal keys wins in os/exec).
func (d Dirs) Env() []string {
	env := []string{"HOME=" + d.Home, "PI_CODING_AGENT_DIR=" + d.AgentDir}
	for _, v := range xdgVars {
		env = append(env, v+"="+d.XDG[v])
	}
	for _, v := range clearedVars {
		env = append(env, v+"=")
	}
	return env
}

func (d Dirs) mkdirs(t testing.TB) {
	t.Helper()
	dirs := []string{d.Home, d.AgentDir}
	for _, v := range xdgVars {
		dirs = append(dirs, d.XDG[v])
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteFile writes text to path (a settings, models or auth file of a test's dirs) with
// perm, making its folder first, or fails the test.
func WriteFile(t testing.TB, path, text string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
}
