package catalog

import (
	"context"
	"strings"
	"testing"
)

// A key command that sets variables before its program ("!NAME=value cmd") is described
// by its program alone: the value, which may be the key or what unlocks it, is in no
// description and no error of a failed command (the words that reach errors, --json and
// LSP progress).
func TestKeyCommandNeverShowsItsAssignments(t *testing.T) {
	const value = "hunter2-Vault-Pass-0042"
	for _, config := range []string{
		"!VAULT_PASS=" + value + " false",
		"!VAULT_PASS=" + value + " OTHER=x false --flag",
		"!  VAULT_PASS=" + value + "  false",
		"!VAULT_PASS=" + value,
	} {
		d := DescribeValue(config)
		if strings.Contains(d, value) || strings.Contains(d, "VAULT_PASS=") {
			t.Errorf("%q described as %s", config, d)
		}
		_, err := resolveValue(context.Background(), config, "API key for provider \"p\"", nil, nil)
		if err == nil {
			t.Fatalf("%q: no error", config)
		}
		if strings.Contains(err.Error(), value) || strings.Contains(err.Error(), "VAULT_PASS=") {
			t.Errorf("%q: error %v", config, err)
		}
	}
	if d := DescribeValue("!VAULT_PASS=" + value + " false"); !strings.Contains(d, `"!false …"`) {
		t.Errorf("the program is not named: %s", d)
	}
}
