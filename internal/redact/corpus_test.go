package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The project's own sessions and the summaries recorded from real Pi (the corpus and
// the oracle's goldens: ordinary coding sessions, with their commands, paths, ids, UUIDs
// and git SHAs) hold no secret, and redaction leaves every line of them as it is.
func TestNoFalsePositiveOnTheCorpus(t *testing.T) {
	lines := 0
	for _, root := range []string{"../../testdata/corpus", "../../testdata/oracle-golden"} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json")) {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(string(data), "\n") {
				lines++
				if out := JSON([]byte(l)); string(out) != l {
					t.Errorf("%s: a line changed:\n%.300s", p, out)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if lines < 1000 {
		t.Fatalf("premise: only %d lines read", lines)
	}
	t.Logf("RESULT false positives: 0 lines changed of %d in the corpus and the goldens", lines)
}
