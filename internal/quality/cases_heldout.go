package quality

// Held-out sessions, written after the extractive summarizer was tuned on the others:
// their mean, reported apart, checks that its heuristics are general.

const orderServiceJava = `package com.acme.orders;

public class OrderService {
    private final CustomerRepository customers;
    private final OrderRepository orders;

    public Invoice invoiceFor(long orderId) {
        Order order = orders.findById(orderId);
        Customer customer = customers.findById(order.getCustomerId());
        return new Invoice(order, customer.getBillingAddress());
    }
}
`

const hugoPrevSummary = `## Goal
Move the documentation site from Jekyll to Hugo (site/), keeping every existing URL working.

## Constraints & Preferences
- No theme from the Hugo themes site: port our own layouts.
- Keep the build under 10 seconds in CI.

## Progress
### Done
- [x] Layouts ported to site/layouts/_default (baseof, single, list)
- [x] Content moved from _posts/ to site/content/posts/ with front matter converted

### In Progress
- [ ] Fixing internal links

### Blocked
- ` + "`lychee --offline site/public`" + ` reports 14 broken links (old /YYYY/MM/DD/slug.html paths)

## Key Decisions
- **Permalinks as /posts/:slug/**: shorter, and redirects cover the old ones.

## Next Steps
1. Fix the 14 broken links
2. Add redirects from the old Jekyll URLs

## Critical Context
- Hugo version pinned to 0.128.0 in .github/workflows/docs.yml

<modified-files>
site/content/posts/
site/layouts/_default/baseof.html
</modified-files>`

func heldOutCases() []*Case {
	cases := []*Case{
		lastTurn("held-java-npe", "a NullPointerException fixed in a Java service, a compile error on the way, a late style constraint", func(s *Script) {
			s.User("Production logs show a NullPointerException in OrderService.invoiceFor for some orders. Can you find the cause and fix it? Stack trace: java.lang.NullPointerException: Cannot invoke \"com.acme.orders.Customer.getBillingAddress()\" because \"customer\" is null")
			s.Do("Looking at the service.", Read("src/main/java/com/acme/orders/OrderService.java", orderServiceJava))
			s.Do("customers.findById returns null for deleted customers (soft delete filters them out). An invoice for an order of a deleted customer should still be possible: the billing address is copied onto the order at checkout.", Sh("grep -n 'billingAddress' src/main/java/com/acme/orders/Order.java", "23:    private Address billingAddress;\n41:    public Address getBillingAddress() { return billingAddress; }"))
			s.Do("Using the order's own billing address when the customer is gone.",
				Edit("src/main/java/com/acme/orders/OrderService.java", "        Customer customer = customers.findById(order.getCustomerId());\n        return new Invoice(order, customer.getBillingAddress());", "        Optional<Customer> customer = Optional.ofNullable(customers.findById(order.getCustomerId()));\n        Address billing = customer.map(Customer::getBillingAddress).orElse(order.getBillingAddress());\n        return new Invoice(order, billing);"),
				Write("src/test/java/com/acme/orders/OrderServiceTest.java", "class OrderServiceTest {\n    @Test\n    void invoiceForDeletedCustomerUsesOrderAddress() {\n        var service = new OrderService(new InMemoryCustomers(), ordersWith(order(7L, 99L)));\n        assertEquals(ADDRESS, service.invoiceFor(7L).billingAddress());\n    }\n}\n"))
			s.Do("", ShFail("./gradlew test --tests 'com.acme.orders.OrderServiceTest'", "> Task :compileJava FAILED\n/home/dev/src/held-java-npe/src/main/java/com/acme/orders/OrderService.java:9: error: cannot find symbol\n        Optional<Customer> customer = Optional.ofNullable(customers.findById(order.getCustomerId()));\n        ^\n  symbol:   class Optional\n  location: class OrderService\n1 error\n\nFAILURE: Build failed with an exception.", 1))
			s.Do("Missing import.", Edit("src/main/java/com/acme/orders/OrderService.java", "package com.acme.orders;\n", "package com.acme.orders;\n\nimport java.util.Optional;\n"))
			s.Do("", Sh("./gradlew test --tests 'com.acme.orders.OrderServiceTest'", "> Task :test\n\nOrderServiceTest > invoiceForDeletedCustomerUsesOrderAddress() PASSED\n\nBUILD SUCCESSFUL in 14s\n5 actionable tasks: 2 executed, 3 up-to-date"))
			s.Say("The NPE came from customers.findById returning null for soft-deleted customers. invoiceFor now falls back to the billing address stored on the order, and OrderServiceTest covers an order of a deleted customer. The test passes.")
			s.User("Looks good, but we have a rule here: Optional only as a return type, never as a local variable or field. Rewrite it with a plain null check. Then run the whole test suite.")
			s.Do("Rewriting without Optional.", Edit("src/main/java/com/acme/orders/OrderService.java", "        Optional<Customer> customer = Optional.ofNullable(customers.findById(order.getCustomerId()));\n        Address billing = customer.map(Customer::getBillingAddress).orElse(order.getBillingAddress());", "        Customer customer = customers.findById(order.getCustomerId());\n        Address billing = customer != null ? customer.getBillingAddress() : order.getBillingAddress();"),
				Edit("src/main/java/com/acme/orders/OrderService.java", "\nimport java.util.Optional;\n", ""))
			s.Do("", Sh("./gradlew test", "> Task :test\n\nBUILD SUCCESSFUL in 41s\n7 actionable tasks: 3 executed, 4 up-to-date\n312 tests completed, 0 failed"))
			s.Say("Done: invoiceFor uses a plain null check now (no Optional), and the full suite passes: 312 tests, 0 failed.")
			s.User("Next thing: the nightly export job is failing with this, please have a look:\n\n```\n" + lines(30, func(i int) string {
				return "2026-11-08 03:00:0" + string(rune('0'+i%10)) + " INFO  ExportJob - exported batch " + string(rune('A'+i%26)) + " (500 rows)"
			}) + "2026-11-08 03:01:12 ERROR ExportJob - java.io.IOException: No space left on device\n```")
		}, Expect{
			Goal:          []string{"NullPointerException | npe & invoiceFor | OrderService"},
			Latest:        "null check | optional",
			Constraints:   []string{"optional & return type"},
			Done:          []string{"billing address & order | fall | falls back", "312 tests | 0 failed | suite passes"},
			Stale:         []string{"cannot find symbol"},
			Entities:      []string{"src/main/java/com/acme/orders/OrderService.java", "OrderServiceTest", "./gradlew test", "customers.findById"},
			ModifiedFiles: []string{"src/main/java/com/acme/orders/OrderService.java", "src/test/java/com/acme/orders/OrderServiceTest.java"},
		}),
		keeping(120, "held-eslint-flat-config", "an ESLint flat-config migration across a monorepo, half done, with a rule about disabling rules", func(s *Script) {
			s.User("Migrate the monorepo from .eslintrc.json files to the ESLint 9 flat config. One eslint.config.js at the root, packages may extend it.")
			s.Do("", Sh("ls packages/ && find . -name '.eslintrc*' -not -path '*/node_modules/*'", "api\ncli\nshared\nui\n./.eslintrc.json\n./packages/api/.eslintrc.json\n./packages/cli/.eslintrc.json\n./packages/ui/.eslintrc.json"))
			s.Do("Here's how I'd do it:\n- first the root eslint.config.js, ported from ./.eslintrc.json\n- then packages/api and packages/cli, which only add node globals\n- then packages/ui, which has the React rules\n- finally delete the old .eslintrc.json files and run pnpm -r lint",
				Write("eslint.config.js", "import js from \"@eslint/js\";\nimport ts from \"typescript-eslint\";\n\nexport default ts.config(js.configs.recommended, ...ts.configs.recommended, {\n  rules: { \"no-console\": \"error\" },\n});\n"))
			s.Do("Root config done. Now api and cli.", Write("packages/api/eslint.config.js", "import root from \"../../eslint.config.js\";\nimport globals from \"globals\";\n\nexport default [...root, { languageOptions: { globals: globals.node } }];\n"),
				Write("packages/cli/eslint.config.js", "import root from \"../../eslint.config.js\";\nimport globals from \"globals\";\n\nexport default [...root, { languageOptions: { globals: globals.node } }];\n"))
			s.Do("", ShFail("pnpm --filter api --filter cli lint", "packages/cli lint: /home/dev/src/held-eslint-flat-config/packages/cli/src/log.ts\npackages/cli lint:   14:5  error  Unexpected console statement  no-console\npackages/cli lint: ✖ 1 problem (1 error, 0 warnings)\npackages/cli lint: Failed", 1))
			s.User("Don't turn rules off to make it pass. If the code breaks a rule, fix the code.")
			s.Do("Understood, no disabling. The console call in the cli logger should go through the logger's stream.", Edit("packages/cli/src/log.ts", "    console.error(msg);", "    process.stderr.write(msg + \"\\n\");"))
			s.Do("", Sh("pnpm --filter api --filter cli lint", "packages/api lint: Done\npackages/cli lint: Done"))
			s.Do("api and cli are clean. Next is packages/ui with the React plugin.", Read("packages/ui/.eslintrc.json", "{\n  \"extends\": [\"../../.eslintrc.json\", \"plugin:react/recommended\", \"plugin:react-hooks/recommended\"],\n  \"settings\": { \"react\": { \"version\": \"detect\" } }\n}\n"))
			s.Do("Writing the ui config with the flat React configs.", Write("packages/ui/eslint.config.js", "import root from \"../../eslint.config.js\";\nimport react from \"eslint-plugin-react\";\nimport hooks from \"eslint-plugin-react-hooks\";\n\nexport default [...root, react.configs.flat.recommended, { plugins: { \"react-hooks\": hooks }, rules: hooks.configs.recommended.rules, settings: { react: { version: \"detect\" } } }];\n"))
			s.Do("", ShFail("pnpm --filter ui lint", "packages/ui lint: /home/dev/src/held-eslint-flat-config/packages/ui/src/Table.tsx\npackages/ui lint:   88:6  warning  React Hook useEffect has a missing dependency: 'sort'  react-hooks/exhaustive-deps\npackages/ui lint: /home/dev/src/held-eslint-flat-config/packages/ui/src/Modal.tsx\npackages/ui lint:   31:11  error  'React' must be in scope when using JSX  react/react-in-jsx-scope\npackages/ui lint: ✖ 2 problems (1 error, 1 warning)", 1))
			s.Do("The react-in-jsx-scope error is wrong for the new JSX transform: the right fix is the jsx-runtime config, which is not disabling a rule but declaring the runtime we use. The exhaustive-deps warning is real and needs a code fix in Table.tsx.", Edit("packages/ui/eslint.config.js", "react.configs.flat.recommended, ", "react.configs.flat.recommended, react.configs.flat[\"jsx-runtime\"], "))
		}, Expect{
			Goal:          []string{"flat config | eslint.config.js"},
			Constraints:   []string{"turn rules off | disabling | disable"},
			Done:          []string{"eslint.config.js", "packages/api | api and cli", "log.ts | process.stderr"},
			InProgress:    []string{"packages/ui"},
			Blocked:       []string{"exhaustive-deps | missing dependency"},
			Next:          []string{"table.tsx | exhaustive-deps | packages/ui", "delete | .eslintrc.json"},
			Stale:         []string{"unexpected console | no-console"},
			Entities:      []string{"eslint.config.js", "packages/ui/eslint.config.js", "packages/ui/src/Table.tsx", "react-hooks/exhaustive-deps", "pnpm --filter ui lint"},
			ReadFiles:     []string{"packages/ui/.eslintrc.json"},
			ModifiedFiles: []string{"eslint.config.js", "packages/api/eslint.config.js", "packages/cli/eslint.config.js", "packages/cli/src/log.ts", "packages/ui/eslint.config.js"},
		}),
		lastTurn("held-deadlock-blocked", "a database deadlock made rarer but not gone, a schema constraint, and a question left to the user", func(s *Script) {
			s.User("The transfer worker hits deadlocks under load (ERROR: deadlock detected in the logs). Fix it. We can't change the schema or add indexes this quarter, the table is too big to migrate.")
			s.Do("", Read("worker/transfer.go", "func (w *Worker) transfer(ctx context.Context, tx pgx.Tx, from, to int64, amount int64) error {\n\tif _, err := tx.Exec(ctx, \"UPDATE accounts SET balance = balance - $1 WHERE id = $2\", amount, from); err != nil {\n\t\treturn err\n\t}\n\t_, err := tx.Exec(ctx, \"UPDATE accounts SET balance = balance + $1 WHERE id = $2\", amount, to)\n\treturn err\n}\n"))
			s.Do("Two transfers in opposite directions lock the same two rows in opposite order. Locking both rows in id order first (SELECT ... FOR UPDATE ORDER BY id) removes that cycle.", Edit("worker/transfer.go", "\tif _, err := tx.Exec(ctx, \"UPDATE accounts SET balance = balance - $1 WHERE id = $2\", amount, from); err != nil {", "\tif _, err := tx.Exec(ctx, \"SELECT 1 FROM accounts WHERE id IN ($1, $2) ORDER BY id FOR UPDATE\", from, to); err != nil {\n\t\treturn err\n\t}\n\tif _, err := tx.Exec(ctx, \"UPDATE accounts SET balance = balance - $1 WHERE id = $2\", amount, from); err != nil {"))
			s.Do("Running the concurrency test 20 times against the test database.", ShFail("go test ./worker/ -run TestConcurrentTransfers -count=20", "--- FAIL: TestConcurrentTransfers (2.31s)\n    transfer_test.go:58: transfer 812: ERROR: deadlock detected (SQLSTATE 40P01)\nFAIL\nFAIL\tgithub.com/acme/ledger/worker\t38.112s\nFAIL", 1))
			s.Do("Still 1 of 20. The remaining cycle is with the fee posting: postFee updates the fees account (id 1) after the transfer rows, while the daily settlement locks account 1 first.", Sh("rg -n 'UPDATE accounts' --type go", "worker/transfer.go:9:\t\"UPDATE accounts SET balance = balance - $1 WHERE id = $2\"\nworker/fees.go:22:\t\"UPDATE accounts SET balance = balance + $1 WHERE id = 1\"\nsettle/daily.go:47:\t\"UPDATE accounts SET balance = balance - $1 WHERE id = 1\""))
			s.Say("The id-ordered locking in `worker/transfer.go` fixed the transfer-transfer deadlock, but `go test ./worker/ -run TestConcurrentTransfers -count=20` still fails once in 20 with `deadlock detected (SQLSTATE 40P01)`: the fee posting in `worker/fees.go` locks the fees account (id 1) last, while `settle/daily.go` locks it first. Without a schema change I see two options: take a transaction-level advisory lock (`pg_advisory_xact_lock`) on the fees account at the start of both, or retry transactions on SQLSTATE 40P01. Which do you prefer?")
			s.User("Before deciding, here is last night's deadlock report from pg_stat_database and the log, for context:\n\n```\n" + lines(24, func(i int) string {
				return "2026-11-08 0" + string(rune('0'+i%10)) + ":14:22 UTC [81" + string(rune('0'+i%10)) + "] ERROR:  deadlock detected\n2026-11-08 0" + string(rune('0'+i%10)) + ":14:22 UTC [81" + string(rune('0'+i%10)) + "] DETAIL:  Process 81" + string(rune('0'+i%10)) + " waits for ShareLock on transaction 4412; blocked by process 77" + string(rune('0'+i%10)) + "."
			}) + "```")
		}, Expect{
			Goal:          []string{"deadlock"},
			Constraints:   []string{"schema | indexes"},
			Done:          []string{"id order | order by id | for update | id-ordered"},
			Blocked:       []string{"40p01 | deadlock detected & 1 of 20 | once in 20 | fails once | still fails"},
			Next:          []string{"advisory | pg_advisory_xact_lock | retry | which do you prefer | prefer"},
			Entities:      []string{"worker/transfer.go", "worker/fees.go", "settle/daily.go", "pg_advisory_xact_lock", "SQLSTATE 40P01"},
			ModifiedFiles: []string{"worker/transfer.go"},
		}),
		branchTo("fork", "held-branch-helm", "a branch that tries a Helm chart instead of kustomize; it works, the user declines", func(s *Script) {
			s.User("Our deploy/ folder has kustomize overlays for dev, staging and prod.")
			s.Say("Yes: deploy/base plus three overlays.")
			s.Mark("fork")
			s.User("Let's see what a Helm chart for the api would look like instead. Values per environment, same resources as the kustomize base.")
			s.Do("Creating the chart skeleton from the base manifests.", Write("charts/api/Chart.yaml", "apiVersion: v2\nname: api\nversion: 0.1.0\nappVersion: \"1.14.0\"\n"),
				Write("charts/api/templates/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n"),
				Write("charts/api/values-staging.yaml", "replicas: 2\nimage:\n  tag: 1.14.0\n"))
			s.Do("Rendering and linting.", Sh("helm lint charts/api -f charts/api/values-staging.yaml && helm template api charts/api -f charts/api/values-staging.yaml | kubectl diff -f - -n staging", ""))
			s.Say("helm lint passes (1 chart linted, 0 failed), and the staging render matches what kustomize deploys today except for two labels Helm adds (app.kubernetes.io/managed-by, helm.sh/chart). The chart is 3 files against 7 in the kustomize overlays, but every value now goes through templates, which makes reviewing a diff of the rendered output a separate step.")
			s.User("Nah, the review step is the thing we care about. Stick with kustomize.")
		}, Expect{
			Goal:          []string{"helm"},
			Constraints:   []string{"same resources | values per environment"},
			Done:          []string{"charts/api | chart", "helm lint & pass | 0 failed"},
			Next:          []string{"kustomize"},
			Entities:      []string{"charts/api/Chart.yaml", "charts/api/values-staging.yaml", "app.kubernetes.io/managed-by"},
			ModifiedFiles: []string{"charts/api/Chart.yaml", "charts/api/templates/deployment.yaml", "charts/api/values-staging.yaml"},
		}),
		keeping(60, "held-hugo-redirects", "an update of a previous summary: its blocker resolved, then redirects started and not finished", func(s *Script) {
			s.User("Move the docs site to Hugo.")
			s.Say("Starting with the layouts.")
			s.Mark("kept")
			s.User("Continue with the links.")
			s.Compaction(hugoPrevSummary, "kept", nil, []string{"site/content/posts/", "site/layouts/_default/baseof.html"})
			s.Do("The broken links are the old date-based paths in post bodies. Rewriting them to /posts/:slug/.", Sh("grep -rlE '\\(/[0-9]{4}/[0-9]{2}/[0-9]{2}/' site/content/posts | wc -l", "9"),
				Sh("grep -rlE '\\(/[0-9]{4}/[0-9]{2}/[0-9]{2}/' site/content/posts | xargs sed -i -E 's#\\(/[0-9]{4}/[0-9]{2}/[0-9]{2}/([a-z0-9-]+)\\.html\\)#(/posts/\\1/)#g'", ""))
			s.Do("", Sh("cd site && hugo --gc --minify && lychee --offline public", "Start building sites …\nTotal in 3812 ms\n🔍 1184 Total ✅ 1184 OK 🚫 0 Errors"))
			s.Say("All links resolve now: lychee reports 1184 OK and 0 errors, and the Hugo build takes 3.8s.")
			s.User("Great. Now the redirects: every old /YYYY/MM/DD/slug.html URL must redirect to /posts/slug/. We host on Netlify, so use a _redirects file, not Hugo aliases.")
			s.Do("Generating site/static/_redirects from the old permalinks in the Jekyll history.", Sh("git log --diff-filter=D --name-only --format= -- _posts/ | sed -E 's#_posts/([0-9]{4})-([0-9]{2})-([0-9]{2})-(.+)\\.md#/\\1/\\2/\\3/\\4.html /posts/\\4/ 301#' > site/static/_redirects && wc -l site/static/_redirects", "212 site/static/_redirects"))
			s.Do("212 redirects. Checking a few against the built site.", Sh("head -3 site/static/_redirects", "/2021/03/14/release-notes-2-0.html /posts/release-notes-2-0/ 301\n/2021/04/02/faster-builds.html /posts/faster-builds/ 301\n/2021/05/19/plugin-api.html /posts/plugin-api/ 301"))
			s.Do("Next I'll verify every target exists in site/public, then test one with netlify dev.", Sh("awk '{print $2}' site/static/_redirects | while read p; do test -e site/public${p}index.html || echo missing $p; done | head", "missing /posts/draft-roadmap/\nmissing /posts/old-benchmarks/"))
		}, Expect{
			Goal:          []string{"hugo"},
			Latest:        "redirect",
			Constraints:   []string{"_redirects | netlify & aliases", "10 seconds | themes"},
			Done:          []string{"1184 | 0 errors | lychee", "layouts"},
			InProgress:    []string{"redirect"},
			Next:          []string{"_redirects | redirect"},
			Stale:         []string{"14 broken links"},
			Entities:      []string{"site/static/_redirects", "212", "lychee --offline"},
			ModifiedFiles: []string{"site/content/posts/", "site/layouts/_default/baseof.html"},
		}),
		lastTurn("held-pandas-user-shell", "a pandas slowdown measured by the user's own commands, vectorized under an exactness constraint", func(s *Script) {
			s.User("The daily report is slow again. I profiled it, look:")
			s.Shell("python -m cProfile -s cumtime reports/daily.py --date 2026-11-07 | head -8", "         4811932 function calls in 41.207 seconds\n   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n        1    0.002    0.002   41.207   41.207 daily.py:1(<module>)\n        1    0.310    0.310   40.881   40.881 daily.py:58(build)\n   188412   21.771    0.000   38.912    0.000 daily.py:31(margin_row)\n   188412    9.004    0.000   12.340    0.000 frame.py:3761(__getitem__)", 0)
			s.Do("Almost all of it is margin_row, called once per row through DataFrame.apply.", Read("reports/daily.py", "def margin_row(row):\n    cost = row[\"cost_cents\"] + row[\"shipping_cents\"]\n    return round((row[\"price_cents\"] - cost) / row[\"price_cents\"], 4) if row[\"price_cents\"] else 0.0\n\n\ndef build(df):\n    df[\"margin\"] = df.apply(margin_row, axis=1)\n    return df.groupby(\"sku\").agg(margin=(\"margin\", \"mean\"))\n"))
			s.User("The numbers must be bit-identical to what we publish today, finance reconciles against them. Don't change the rounding.")
			s.Do("Vectorizing with the same arithmetic and the same round(…, 4), and a zero price still gives 0.0.", Edit("reports/daily.py", "    df[\"margin\"] = df.apply(margin_row, axis=1)", "    cost = df[\"cost_cents\"] + df[\"shipping_cents\"]\n    price = df[\"price_cents\"]\n    df[\"margin\"] = ((price - cost) / price.where(price != 0)).round(4).fillna(0.0)"))
			s.Do("Comparing with the old output for a week of data.", Sh("python scripts/compare_daily.py --from 2026-11-01 --to 2026-11-07", "2026-11-01 identical (1322 skus)\n2026-11-02 identical (1290 skus)\n2026-11-03 identical (1301 skus)\n2026-11-04 identical (1344 skus)\n2026-11-05 identical (1337 skus)\n2026-11-06 identical (1356 skus)\n2026-11-07 identical (1349 skus)"))
			s.Shell("time python reports/daily.py --date 2026-11-07 > /dev/null", "real\t0m2.914s\nuser\t0m2.701s\nsys\t0m0.190s", 0)
			s.Say("From 41.2s to 2.9s for 2026-11-07, and the output is identical for every day of 2026-11-01..07. pandas' round is banker's rounding like Python's round, which is why the numbers match. I can also drop margin_row now that nothing calls it.")
			s.User("Also, separately: here are the columns finance wants added next month, just so you know:\n\n" + lines(26, func(i int) string {
				return "- col_" + string(rune('a'+i)) + ": net revenue after returns, per sku and week, in cents"
			}))
		}, Expect{
			Goal:          []string{"daily report | slow"},
			Constraints:   []string{"bit-identical | rounding"},
			Done:          []string{"2.9s | 2.914s", "identical"},
			Next:          []string{"margin_row"},
			Entities:      []string{"reports/daily.py", "margin_row", "scripts/compare_daily.py", "41.2s"},
			ModifiedFiles: []string{"reports/daily.py"},
		}),
	}
	for _, c := range cases {
		c.HeldOut = true
	}
	return cases
}
