package compaction_test

import (
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
)

// Environment errors, in the shape of long agent runs in a sandbox: the search tool is
// not installed (tried twice), the package index is not reachable; the agent works
// around both and ends on a real failing test. The missing tool and the network are said
// once, in Critical Context; Blocked holds the test, not the environment.
func TestExtractiveEnvironmentErrorsSaidOnce(t *testing.T) {
	s := summarize(t, compaction.KindHistory, decode(t,
		userMsg("find why the invoice totals are off by a cent and fix it"),
		assistantMsg("Searching for the rounding code.", bashCall("b1", "rg -n 'round' billing/")),
		toolFailure("b1", "bash", "/bin/bash: line 1: rg: command not found\n\nCommand exited with code 127"),
		assistantMsg("", bashCall("b2", "rg -n 'Round' billing/invoice.py")),
		toolFailure("b2", "bash", "/bin/bash: line 1: rg: command not found\n\nCommand exited with code 127"),
		assistantMsg("", bashCall("b3", "pip install pytest-cov")),
		toolFailure("b3", "bash", "WARNING: Retrying after connection broken\nERROR: Could not find a version that satisfies the requirement pytest-cov\nsocket.gaierror: [Errno -3] Temporary failure in name resolution\n\nCommand exited with code 1"),
		assistantMsg("", bashCall("b4", "python -m pytest billing/test_invoice.py -q")),
		toolFailure("b4", "bash", "FAILED billing/test_invoice.py::test_total_rounds_half_up - assert Decimal('10.01') == Decimal('10.00')\n1 failed, 7 passed in 0.31s\n\nCommand exited with code 1"),
	))
	crit := s["Critical Context"]
	if strings.Count(crit, "rg: command not found") != 1 {
		t.Errorf("the missing tool is not said exactly once in Critical Context:\n%s", crit)
	}
	if !strings.Contains(crit, "Temporary failure in name resolution") {
		t.Errorf("the unreachable network is not in Critical Context:\n%s", crit)
	}
	for _, sec := range []string{"Blocked", "Next Steps", "In Progress"} {
		if strings.Contains(s[sec], "command not found") || strings.Contains(s[sec], "name resolution") || strings.Contains(s[sec], "pip install") {
			t.Errorf("%s repeats an environment error as work:\n%s", sec, s[sec])
		}
	}
	if !strings.Contains(s["Blocked"], "test_total_rounds_half_up") {
		t.Errorf("the real failure left Blocked:\n%s", s["Blocked"])
	}
}
