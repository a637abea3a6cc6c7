package quality

// DemoSession is the example session `make demo` compacts (cmd/pi-lsp/example): a
// session in the shape real ones have, written here: a request wrapped in harness text, a
// todo list kept by a todo extension, multi-line shell with set-up lines, an assignment
// from $(…) and a here-document, a harness notice in a tool's output, a failing test
// fixed by the next change, an assistant report with a heading, a table and bold
// lead-ins, then two more requests (a pull request, a lint failure from CI).
// `go run ./tools/quality -demo FILE` writes it; a test keeps the shipped file current.
func DemoSession() []byte {
	s := NewScript("demo-quotes-timeout", "/home/dev/shipping-rates")
	todo := func(items ...[2]string) Call {
		var list []any
		for _, it := range items {
			list = append(list, object{{"content", it[0]}, {"status", it[1]}})
		}
		return Tool("todo", []kv{{"todos", list}}, "Todo list updated.", false)
	}
	s.User("The carrier quote endpoint has been timing out under load since Tuesday's deploy. Find out why and fix it. " +
		"Don't change the JSON that /quotes returns, and keep the fix behind the existing QUOTES_CACHE flag.\n\n" +
		"<system-reminder>The user's editor has internal/quotes/cache.go open. This reminder is not part of the request.</system-reminder>")
	s.Do("I'll reproduce it first, then read the carrier client and the cache.", todo(
		[2]string{"Reproduce the timeout under load", "in_progress"},
		[2]string{"Find the cause in the carrier client or the cache", "pending"},
		[2]string{"Fix it behind QUOTES_CACHE", "pending"},
		[2]string{"Measure again", "pending"}))
	s.Do("", Sh("# load test against the local stack\ncd services/quotes\nexport QUOTES_CACHE=1\nLOAD=$(jq -c . testdata/load.json)\nhey -n 400 -c 40 -m POST -T application/json -d \"$LOAD\" http://localhost:8087/quotes",
		"Summary:\n  Total:\t41.2203 secs\n  Slowest:\t9.8841 secs\n  Average:\t4.0114 secs\n\nLatency distribution:\n  50% in 3.9120 secs\n  99% in 8.2213 secs\n\nStatus code distribution:\n  [200]\t371 responses\n  [504]\t29 responses\n\nShell cwd was reset to /home/dev/shipping-rates"))
	s.Do("29 of 400 requests hit the gateway's 504 and p99 is 8.2s. Reading the client and the cache.",
		Read("internal/quotes/carrier.go", "package quotes\n\nfunc (c *Carrier) Quote(ctx context.Context, req Request) (Quote, error) {\n\tclient := &http.Client{}\n\tresp, err := client.Do(c.newRequest(ctx, req))\n\t..."),
		Read("internal/quotes/cache.go", "package quotes\n\nfunc (c *Cache) Get(ctx context.Context, key string, fetch func() (Quote, error)) (Quote, error) {\n\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\tif q, ok := c.items[key]; ok {\n\t\treturn q, nil\n\t}\n\tq, err := fetch()\n\t..."))
	s.Do("Two causes. The carrier client is built per request with no timeout, so a slow carrier holds the request until the gateway gives up; and Cache.Get holds its mutex during the upstream fetch, so every miss waits for every other. I'll give the client one shared instance with a 3s timeout and release the lock before fetching.",
		todo([2]string{"Reproduce the timeout under load", "completed"},
			[2]string{"Find the cause in the carrier client or the cache", "completed"},
			[2]string{"Fix it behind QUOTES_CACHE", "in_progress"},
			[2]string{"Measure again", "pending"}),
		Edit("internal/quotes/carrier.go", "\tclient := &http.Client{}\n\tresp, err := client.Do(c.newRequest(ctx, req))", "\tresp, err := c.http.Do(c.newRequest(ctx, req)) // shared, Timeout: 3s"),
		Edit("internal/quotes/cache.go", "\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\tif q, ok := c.items[key]; ok {\n\t\treturn q, nil\n\t}\n\tq, err := fetch()", "\tc.mu.Lock()\n\tq, ok := c.items[key]\n\tc.mu.Unlock()\n\tif ok {\n\t\treturn q, nil\n\t}\n\tq, err := fetch()"))
	s.Do("", ShFail("go test ./internal/quotes/...", "--- FAIL: TestCacheSharesOneFetch (0.01s)\n    cache_test.go:54: upstream calls = 3, want 1\nFAIL\nFAIL\tgithub.com/dev/shipping-rates/internal/quotes\t0.214s", 1))
	s.Do("Releasing the lock lets concurrent misses fetch the same key three times. Concurrent misses now wait on one in-flight fetch per key (a map of channels, no new dependency).",
		Edit("internal/quotes/cache.go", "\tq, err := fetch()", "\tq, err := c.shared(key, fetch) // one fetch per key in flight"))
	s.Do("", Sh("go test ./internal/quotes/...", "ok  \tgithub.com/dev/shipping-rates/internal/quotes\t0.198s"))
	s.Do("", Sh("cat > /tmp/quotes-load.sh <<'EOF'\n#!/usr/bin/env bash\nset -euo pipefail\nhey -n 400 -c 40 -m POST -T application/json -d \"$(jq -c . testdata/load.json)\" http://localhost:8087/quotes | grep -E '99%|\\[5'\nEOF\nQUOTES_CACHE=1 bash /tmp/quotes-load.sh",
		"  99% in 0.1402 secs"))
	s.Do("", todo([2]string{"Reproduce the timeout under load", "completed"},
		[2]string{"Find the cause in the carrier client or the cache", "completed"},
		[2]string{"Fix it behind QUOTES_CACHE", "completed"},
		[2]string{"Measure again", "completed"},
		[2]string{"Run the race detector over internal/quotes", "pending"}))
	s.Say("## Result\n\n| metric | before | after |\n|---|---|---|\n| p99 | 8.2s | 140ms |\n| 504s | 29 / 400 | 0 / 400 |\n\n" +
		"**What changed:**\n- `internal/quotes/carrier.go`: one shared HTTP client with a 3s timeout\n- `internal/quotes/cache.go`: the lock is released before the upstream call; concurrent misses share one fetch\n\n" +
		"The JSON of /quotes is unchanged and the new path only runs with QUOTES_CACHE=1. Next I'll run the race detector over the package before opening a PR.")
	s.User("looks good. run the race tests, then open the PR against release/2.4")
	s.Do("", Sh("go test -race -count=3 ./internal/quotes/...", "ok  \tgithub.com/dev/shipping-rates/internal/quotes\t2.871s"))
	s.Do("", Sh("git checkout -b fix/quotes-timeout && git commit -am \"quotes: shared carrier client with a timeout; one fetch per key in flight\" && git push -u origin fix/quotes-timeout",
		"[fix/quotes-timeout 4c1e9a7] quotes: shared carrier client with a timeout; one fetch per key in flight\n 2 files changed, 31 insertions(+), 9 deletions(-)\nbranch 'fix/quotes-timeout' set up to track 'origin/fix/quotes-timeout'."))
	s.Do("", Sh("gh pr create --base release/2.4 --title \"quotes: fix the timeouts under load\" --body-file /tmp/pr-body.md",
		"https://github.com/dev/shipping-rates/pull/312"))
	s.Say("The race detector is clean (3 runs) and the PR is open against release/2.4: https://github.com/dev/shipping-rates/pull/312")
	s.User("CI says lint fails on cache.go")
	s.Do("", ShFail("golangci-lint run ./internal/quotes/...", "internal/quotes/cache.go:88:2: ineffectual assignment to err (ineffassign)\n\terr = nil\n\t^\n1 issues:\n* ineffassign: 1", 1))
	s.Do("A leftover `err = nil` after the shared fetch; removing it.", Edit("internal/quotes/cache.go", "\terr = nil\n", ""))
	s.Do("", Sh("golangci-lint run ./internal/quotes/... && go test ./internal/quotes/...", "ok  \tgithub.com/dev/shipping-rates/internal/quotes\t0.201s"))
	s.Do("", Sh("git commit -am \"quotes: drop an ineffectual assignment\" && git push", "[fix/quotes-timeout 9b07d2e] quotes: drop an ineffectual assignment\n 1 file changed, 1 deletion(-)"))
	s.Say("Lint passes now and the fix is pushed to the PR (9b07d2e); CI should rerun on its own.")
	return s.Bytes()
}
