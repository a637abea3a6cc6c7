package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// settingsCases are global and project settings files, trust files and a model, each
// resolved by pi-lsp and by Pi 1.6.0's SettingsManager (projectTrusted from
// resolveProjectTrusted without a UI, then getCompactionSettings(model)).
var settingsCases = []struct {
	name                    string
	global, project, trust  string // file contents; "" for no file
	provider, model         string
	wantKeep, wantReserve   int
	wantTrusted, wantRefuse bool
}{
	{name: "defaults", wantKeep: 20000, wantReserve: 16384},
	{name: "global values", global: `{"compaction":{"keepRecentTokens":1000,"reserveTokens":4000}}`, wantKeep: 1000, wantReserve: 4000},
	{name: "untrusted project is not read", global: `{"compaction":{"keepRecentTokens":1000}}`, project: `{"compaction":{"keepRecentTokens":5}}`,
		wantKeep: 1000, wantReserve: 16384},
	{name: "trusted project merges recursively", global: `{"compaction":{"keepRecentTokens":1000,"modelOverrides":{"p/m":{"reserveTokens":3000}}}}`,
		project: `{"compaction":{"modelOverrides":{"p/m":{"keepRecentTokens":77}}}}`, trust: `{"CWD":true}`,
		provider: "p", model: "m", wantKeep: 77, wantReserve: 3000, wantTrusted: true},
	{name: "a trusted parent trusts the project", project: `{"compaction":{"keepRecentTokens":42}}`, trust: `{"PARENT":true}`,
		wantKeep: 42, wantReserve: 16384, wantTrusted: true},
	{name: "the nearest entry wins", project: `{"compaction":{"keepRecentTokens":42}}`, trust: `{"PARENT":true,"CWD":false}`,
		wantKeep: 20000, wantReserve: 16384},
	{name: "null passes to the parent", project: `{"compaction":{"keepRecentTokens":42}}`, trust: `{"PARENT":true,"CWD":null}`,
		wantKeep: 42, wantReserve: 16384, wantTrusted: true},
	{name: "defaultProjectTrust always", global: `{"defaultProjectTrust":"always"}`, project: `{"compaction":{"keepRecentTokens":42}}`,
		wantKeep: 42, wantReserve: 16384, wantTrusted: true},
	{name: "defaultProjectTrust never", global: `{"defaultProjectTrust":"never"}`, project: `{"compaction":{"keepRecentTokens":42}}`,
		wantKeep: 20000, wantReserve: 16384},
	{name: "override for another model", global: `{"compaction":{"modelOverrides":{"p/other":{"keepRecentTokens":5}}}}`,
		provider: "p", model: "m", wantKeep: 20000, wantReserve: 16384},
	{name: "override wins over ordinary", global: `{"compaction":{"keepRecentTokens":1000,"modelOverrides":{"p/m":{"keepRecentTokens":5,"reserveTokens":0}}}}`,
		provider: "p", model: "m", wantKeep: 5, wantReserve: 0},
	{name: "a fraction is refused", global: `{"compaction":{"keepRecentTokens":1.5}}`, wantRefuse: true},
	{name: "a negative value is refused", global: `{"compaction":{"reserveTokens":-1}}`, wantRefuse: true},
	{name: "a string is refused", global: `{"compaction":{"reserveTokens":"100"}}`, wantRefuse: true},
	{name: "an override that is not an object", global: `{"compaction":{"modelOverrides":{"p/m":5}}}`, provider: "p", model: "m", wantRefuse: true},
	{name: "an override that is an array", global: `{"compaction":{"modelOverrides":{"p/m":[1,2]}}}`, provider: "p", model: "m", wantRefuse: true},
	{name: "a bad override value", global: `{"compaction":{"modelOverrides":{"p/m":{"keepRecentTokens":true}}}}`, provider: "p", model: "m", wantRefuse: true},
	{name: "a bad override of another model is not looked at", global: `{"compaction":{"modelOverrides":{"p/x":{"keepRecentTokens":true}}}}`,
		provider: "p", model: "m", wantKeep: 20000, wantReserve: 16384},
}

func TestSettingsMatchPi16(t *testing.T) {
	o := oracle.StartLive(t)
	for _, tc := range settingsCases {
		t.Run(tc.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			agent, parent := filepath.Join(root, "agent"), filepath.Join(root, "work")
			cwd := filepath.Join(parent, "proj")
			for _, d := range []string{agent, filepath.Join(cwd, ".pi")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write := func(p, content string) {
				if content == "" {
					return
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(agent, "settings.json"), tc.global)
			write(filepath.Join(cwd, ".pi", "settings.json"), tc.project)
			trust := tc.trust
			for k, v := range map[string]string{`"CWD"`: cwd, `"PARENT"`: parent} {
				trust = strings.ReplaceAll(trust, k, `"`+v+`"`)
			}
			write(filepath.Join(agent, "trust.json"), trust)

			st := session.LoadSettings(agent, cwd)
			c, err := st.CompactionFor(tc.provider, tc.model)
			if tc.wantRefuse != (err != nil) {
				t.Fatalf("refused = %v (%v), want %v", err != nil, err, tc.wantRefuse)
			}
			if err == nil && (c.KeepRecentTokens != tc.wantKeep || c.ReserveTokens != tc.wantReserve) {
				t.Errorf("keep %d reserve %d, want %d %d", c.KeepRecentTokens, c.ReserveTokens, tc.wantKeep, tc.wantReserve)
			}
			if tc.project != "" && st.ProjectTrusted != tc.wantTrusted {
				t.Errorf("project trusted = %v, want %v", st.ProjectTrusted, tc.wantTrusted)
			}
			if o == nil {
				return
			}
			var pi struct {
				Trusted    bool `json:"trusted"`
				Compaction *struct {
					Enabled          bool `json:"enabled"`
					ReserveTokens    int  `json:"reserveTokens"`
					KeepRecentTokens int  `json:"keepRecentTokens"`
				} `json:"compaction"`
				Error *string `json:"error"`
			}
			o.Query(t, map[string]any{"op": "settings", "dir": root, "agentDir": agent, "cwd": cwd, "provider": tc.provider, "model": tc.model}, &pi)
			switch {
			case pi.Error != nil:
				if err == nil || err.Error() != *pi.Error {
					t.Errorf("Pi refuses with %q, pi-lsp: %v", *pi.Error, err)
				}
			case err != nil:
				t.Errorf("pi-lsp refuses (%v), Pi resolves %+v", err, pi.Compaction)
			default:
				if pi.Compaction.KeepRecentTokens != c.KeepRecentTokens || pi.Compaction.ReserveTokens != c.ReserveTokens || pi.Compaction.Enabled != c.Enabled {
					t.Errorf("Pi %+v, pi-lsp %+v", *pi.Compaction, c)
				}
			}
			if tc.project != "" && pi.Trusted != st.ProjectTrusted {
				t.Errorf("Pi trusts the project: %v, pi-lsp: %v", pi.Trusted, st.ProjectTrusted)
			}
		})
	}
}
