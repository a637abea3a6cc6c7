package service_test

import (
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/service"
)

// TestCheckKeyEnv: only a variable whose name says it holds a key is read as the API key.
func TestCheckKeyEnv(t *testing.T) {
	for _, ok := range []string{"", "OPENAI_API_KEY", "OLLAMA_KEY", "HF_TOKEN", "GITHUB_TOKEN", "PI_LSP_TEST_KEY", "my_key", "A1_KEY"} {
		if err := service.CheckKeyEnv(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"HOME", "PATH", "KEY", "_KEY", "SSH_AUTH_SOCK", "OPENAI_KEY_FILE", "MY KEY", "MY-KEY", "1_KEY", "X_KEYS"} {
		err := service.CheckKeyEnv(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), `"`+bad+`"`) || !strings.Contains(err.Error(), "_KEY or _TOKEN") {
			t.Errorf("%q: error does not name the variable and the rule: %v", bad, err)
		}
	}
	// Build refuses before anything is read or sent, also when the name comes from
	// PI_LSP_API_KEY_ENV.
	t.Setenv("PI_LSP_API_KEY_ENV", "HOME")
	cfg := service.SummarizerConfig{Kind: "openai", BaseURL: "http://127.0.0.1:9/v1", Model: "m"}.Over(service.ConfigFromEnv())
	if _, _, err := cfg.Build(t.TempDir()); err == nil || !strings.Contains(err.Error(), `apiKeyEnv "HOME" refused`) {
		t.Errorf("Build: %v", err)
	}
}
