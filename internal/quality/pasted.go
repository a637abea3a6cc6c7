package quality

import (
	"fmt"
	"strings"
)

// Texts users paste into their next request (logs, plans, lists): the last message of
// sessions whose compaction keeps only that message.

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

var benchPanic = "     Running benches/eviction.rs (target/release/deps/eviction-3c1f9a2e7b4d6c80)\n" +
	"Benchmarking evict_lru/1000: Warming up for 3.0000 s\n" +
	"thread 'main' panicked at crates/cache/src/lru.rs:112:27:\n" +
	"index out of bounds: the len is 1000 but the index is 1000\n" +
	"stack backtrace:\n" +
	lines(18, func(i int) string {
		return fmt.Sprintf("  %2d: cache::lru::LruCache<K,V>::%s\n             at ./crates/cache/src/lru.rs:%d:%d", i, []string{"evict", "touch", "unlink", "push_front", "insert", "get"}[i%6], 90+i*3, 9+i%5)
	}) +
	"note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n" +
	"error: bench failed, to rerun pass `-p cache --bench eviction`\n"

var explainPlan = "Limit  (cost=0.43..61.37 rows=1000 width=4) (actual time=0.021..0.934 rows=1000 loops=1)\n" +
	"  ->  Index Only Scan using invoices_pkey on invoices  (cost=0.43..243817.61 rows=4001221 width=4) (actual time=0.020..0.861 rows=1000 loops=1)\n" +
	"        Index Cond: (id > 2417000)\n" +
	"        Filter: (due_date IS NULL)\n" +
	"        Heap Fetches: 0\n" +
	"Planning Time: 0.088 ms\n" +
	"Execution Time: 0.991 ms\n" +
	lines(14, func(i int) string {
		return fmt.Sprintf("-- batch %d: ids %d..%d, %.3f ms", i+1, 2417001+i*1000, 2418000+i*1000, 0.9+float64(i%4)*0.07)
	})

var nightlyTrace = "2026-11-06 02:00:13 INFO jobs.nightly_invoices: starting run for 2026-11-05\n" +
	lines(10, func(i int) string {
		return fmt.Sprintf("2026-11-06 02:0%d:%02d INFO jobs.nightly_invoices: batch %d/40 done (250 invoices)", i/6, 10+i*5, i+1)
	}) +
	"2026-11-06 02:03:41 ERROR jobs.nightly_invoices: batch 11/40 failed\n" +
	"Traceback (most recent call last):\n" +
	"  File \"/srv/billing/jobs/nightly_invoices.py\", line 88, in run_batch\n" +
	"    pdf = render_invoice(inv)\n" +
	"  File \"/srv/billing/pdf/render.py\", line 41, in render_invoice\n" +
	"    font = FONTS[inv.locale]\n" +
	"KeyError: 'pt_BR'\n" +
	"2026-11-06 02:03:41 WARNING jobs.nightly_invoices: continuing with batch 12/40\n"

var conductText = "# Code of Conduct\n\n" +
	"## Our pledge\n\nWe as members, contributors, and leaders pledge to make participation in our community a harassment-free experience for everyone, regardless of age, body size, visible or invisible disability, ethnicity, sex characteristics, gender identity and expression, level of experience, education, socio-economic status, nationality, personal appearance, race, religion, or sexual identity and orientation.\n\n" +
	"## Our standards\n\nExamples of behaviour that contributes to a positive environment: demonstrating empathy and kindness toward other people; being respectful of differing opinions, viewpoints, and experiences; giving and gracefully accepting constructive feedback; accepting responsibility and apologising to those affected by our mistakes.\n\n" +
	"Examples of unacceptable behaviour: the use of sexualised language or imagery; trolling, insulting or derogatory comments, and personal or political attacks; public or private harassment; publishing others' private information without their explicit permission.\n\n" +
	"## Enforcement\n\nInstances of abusive, harassing, or otherwise unacceptable behaviour may be reported to the community leaders responsible for enforcement at conduct@fernhill.dev. All complaints will be reviewed and investigated promptly and fairly.\n"

var probeEvents = "LAST SEEN   TYPE      REASON      OBJECT                     MESSAGE\n" +
	lines(16, func(i int) string {
		if i%3 == 2 {
			return fmt.Sprintf("%3ds        Normal    Started     pod/api-5f6d7c8b9-%c%c2kq   Started container api", 90-i*5, 'a'+i%26, 'k'+i%10)
		}
		return fmt.Sprintf("%3ds        Warning   Unhealthy   pod/api-5f6d7c8b9-%c%c2kq   Readiness probe failed: Get \"http://10.4.%d.%d:8080/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)", 90-i*5, 'a'+i%26, 'k'+i%10, i%4, 17+i)
	})

var qaList = lines(22, func(i int) string {
	names := []string{"Tooltip", "DatePicker", "Modal", "Dropdown", "DataGrid", "Toast", "Sidebar", "Tabs", "Autocomplete", "FileUpload", "Chart", "Pagination"}
	return fmt.Sprintf("%d. src/components/%s.tsx: %s", i+1, names[i%len(names)], []string{"uses findDOMNode", "legacy context API", "string refs", "componentWillReceiveProps", "relies on synchronous setState batching"}[i%5])
})

var importerRun = "imported 1,000,000 rows in 17.9s\n" +
	"      flat  flat%   sum%        cum   cum%\n" +
	lines(14, func(i int) string {
		fns := []string{"encoding/csv.(*Reader).readRecord", "runtime.mallocgc", "github.com/acme/importer/store.(*Batch).Add", "strings.ToLower", "github.com/acme/importer/parse.normalizeEmail", "runtime.memmove", "database/sql.(*Stmt).ExecContext"}
		return fmt.Sprintf("    %5.2fs %5.2f%% %5.2f%%     %5.2fs %5.2f%%  %s", 3.9-float64(i)*0.25, 21.7-float64(i)*1.3, 21.7+float64(i)*4.1, 4.4-float64(i)*0.2, 24.6-float64(i)*1.1, fns[i%len(fns)])
	})

var prodDiff = "--- k8s/prod/api.yaml\n+++ k8s/prod/api.yaml\n@@ -18,7 +18,7 @@ spec:\n       containers:\n       - name: api\n-        image: registry.acme.io/api:1.13.2\n+        image: registry.acme.io/api:1.14.0\n         env:\n" +
	lines(16, func(i int) string {
		keys := []string{"DATABASE_URL", "REDIS_URL", "PAYMENTS_API_KEY", "LOG_LEVEL", "OTEL_EXPORTER_OTLP_ENDPOINT", "FEATURE_FLAGS_URL", "SENTRY_DSN", "SMTP_HOST"}
		return fmt.Sprintf("         - name: %s\n           valueFrom:\n             secretKeyRef: {name: api-%d, key: %s}", keys[i%len(keys)], i/8+1, keys[i%len(keys)])
	})

var slowTests = "--- SLOW TESTS (top 14) ---\n" + lines(14, func(i int) string {
	tests := []string{"TestReindexAll", "TestSynonymExpansion", "TestQueryPlannerCosts", "TestShardRebalance", "TestSnapshotRestore", "TestFuzzyMatchLarge", "TestHighlighter"}
	return fmt.Sprintf("%6.2fs  github.com/acme/search/%s  %s", 48.1-float64(i)*3.2, []string{"index", "query", "shard"}[i%3], tests[i%len(tests)])
})

var cpuSeries = "hour,cpu_avg,cpu_max\n" + lines(96, func(i int) string {
	base := 38 + (i%24)*2
	if i%24 > 18 {
		base -= 20
	}
	return fmt.Sprintf("2026-10-%02dT%02d:00Z,%d,%d", 29+i/24, i%24, base, base+17)
})

var customerCSV = "\ufeffid;customer;note;amount\n" + lines(30, func(i int) string {
	return fmt.Sprintf("%d;Cliente %d Ltda;\"entrega parcial; aguardando %d itens\";%d,%02d", 9100+i, i+1, i%7+1, 120+i*13, i*7%100)
})

var daemonJSON = "$ cat /etc/docker/daemon.json\n{\n  \"log-driver\": \"json-file\",\n  \"log-opts\": {\"max-size\": \"50m\", \"max-file\": \"3\"},\n  \"dns\": [\"10.0.0.2\"],\n  \"default-address-pools\": [{\"base\": \"172.30.0.0/16\", \"size\": 24}]\n}\n\n$ cat /etc/resolv.conf\n" +
	"nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch corp.acme.internal\n\n$ resolvectl status | head -20\n" +
	lines(18, func(i int) string {
		return fmt.Sprintf("Link %d (%s)\n    Current Scopes: DNS\n         Protocols: +DefaultRoute -LLMNR -mDNS -DNSOverTLS DNSSEC=no/unsupported\nCurrent DNS Server: 10.%d.0.%d", i+2, []string{"eth0", "docker0", "br-3f1a2c", "veth91ab"}[i%4], i%3, 2+i%5)
	})
