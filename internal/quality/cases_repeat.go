package quality

// Repeated compactions: the span starts after an earlier compaction whose summary must
// be carried forward and updated (goals and constraints kept, finished work moved to
// Done, resolved blockers dropped).

const searchPrevSummary = `## Goal
Add typo-tolerant search to the product catalogue API (GET /v1/search) using Postgres trigram similarity.

## Constraints & Preferences
- Postgres only: no Elasticsearch or other new services.
- p95 latency of /v1/search must stay under 120ms on the staging dataset.

## Progress
### Done
- [x] Migration 0042_pg_trgm enables the pg_trgm extension and adds a GIN index on products.name (gin_trgm_ops)
- [x] search/query.go uses similarity(name, $1) > 0.3 ordered by similarity

### In Progress
- [ ] Benchmarking p95 latency with scripts/bench_search.sh

### Blocked
- ` + "`make e2e`" + ` fails: port 5432 is already in use by a local Postgres

## Key Decisions
- **Trigram over full-text search**: full-text does not match misspellings such as "wirless".

## Next Steps
1. Free port 5432 or run e2e on another port
2. Run scripts/bench_search.sh and record p95

## Critical Context
- Staging dataset: 1.2M products

<read-files>
search/handler.go
</read-files>

<modified-files>
migrations/0042_pg_trgm.sql
search/query.go
</modified-files>`

const authPrevSummary = `## Goal
- Move session storage from cookies to server-side sessions in Redis for the admin app.
- Later: add an idle timeout of 30 minutes.

## Constraints & Preferences
- Keep the existing login form and routes unchanged.
- Session ids must come from crypto/rand (32 bytes).

## Progress
### Done
- [x] internal/session/store.go: Redis-backed Store with Get/Save/Delete
- [x] Login handler saves a session and sets the sid cookie (HttpOnly, Secure, SameSite=Lax)

### In Progress
- [ ] Logout handler: delete the Redis key and expire the cookie

### Blocked
(none)

## Key Decisions
- **sid cookie only holds the id**: nothing else about the user leaves the server.

## Next Steps
1. Finish the logout handler in internal/http/logout.go
2. Add the idle timeout

## Critical Context
- Redis key format: session:<sid>, TTL 24h

<read-files>
internal/http/login.go
</read-files>

<modified-files>
internal/http/login.go
internal/session/store.go
</modified-files>`

const etlPrevSummary = `## Goal
Port the nightly ETL job (etl/nightly.py) from cron on the old VM to an Airflow DAG.

## Constraints & Preferences
- Keep the same output tables (analytics.daily_orders, analytics.daily_refunds).
- Never write to the analytics schema from a dev machine; test against analytics_dev.

## Progress
### Done
- [x] dags/nightly_etl.py with extract, transform and load tasks

### In Progress
- [ ] Backfilling 2026-10-01..2026-10-31 into analytics_dev

### Blocked
(none)

## Key Decisions
- **One task per stage**: retries of load do not re-run extract.

## Next Steps
1. Finish the October backfill
2. Compare row counts with the cron job's tables

## Critical Context
- Airflow connection id: warehouse_dev

<read-files>
etl/nightly.py
</read-files>

<modified-files>
dags/nightly_etl.py
</modified-files>`

func repeatCases() []*Case {
	return []*Case{
		keeping(40, "repeat-search-blocker-resolved", "a second compaction: the previous summary's blocker resolved and its in-progress work finished", func(s *Script) {
			s.User("Add typo-tolerant search to GET /v1/search using pg_trgm.")
			s.Say("Working on it.")
			s.Mark("kept")
			s.User("Go on with the benchmark.")
			s.Compaction(searchPrevSummary, "kept", []string{"search/handler.go"}, []string{"migrations/0042_pg_trgm.sql", "search/query.go"})
			s.Do("First the e2e port problem from before.", Sh("lsof -i :5432 | tail -1", "postgres 1187 dev    7u  IPv4  31337      0t0  TCP localhost:postgresql (LISTEN)"))
			s.Do("A local Postgres (pid 1187) holds 5432. Rather than stop it, e2e can use another port: the compose file reads E2E_PG_PORT.", Edit("docker-compose.e2e.yml", "      - \"5432:5432\"", "      - \"${E2E_PG_PORT:-5433}:5432\""))
			s.Do("", Sh("make e2e", "e2e: 23 passed, 0 failed (41.8s)"))
			s.Do("e2e passes on 5433. Now the benchmark.", Sh("scripts/bench_search.sh --queries testdata/queries.txt", "queries: 500  concurrency: 16\np50: 38ms  p95: 97ms  p99: 151ms\nerrors: 0"))
			s.Say("Both items from the last checkpoint are done: `make e2e` passes (23 tests) with Postgres mapped to port 5433 via `E2E_PG_PORT` in `docker-compose.e2e.yml`, and the benchmark gives p95 97ms (p50 38ms, p99 151ms) on 500 queries, under the 120ms budget.")
			s.User("Nice. Last thing: log slow searches (over 250ms) with the query text, at warn level.")
			s.Do("", Read("search/handler.go", "func (h *Handler) Search(w http.ResponseWriter, r *http.Request) {\n\tq := r.URL.Query().Get(\"q\")\n\tres, err := h.query.Run(r.Context(), q)\n\t// ...\n}\n"))
			s.Do("Adding the timing and the warn log.", Edit("search/handler.go", "\tres, err := h.query.Run(r.Context(), q)", "\tstart := time.Now()\n\tres, err := h.query.Run(r.Context(), q)\n\tif d := time.Since(start); d > 250*time.Millisecond {\n\t\th.log.Warn(\"slow search\", \"q\", q, \"took\", d)\n\t}"))
			s.Do("", Sh("go test ./search/", "ok  \tgithub.com/acme/catalogue/search\t0.288s"))
			s.Say("Slow searches over 250ms are logged at warn with the query text (`slow search`, fields `q` and `took`) in `search/handler.go`; `go test ./search/` passes.")
		}, Expect{
			Goal:          []string{"typo-tolerant | trigram | pg_trgm"},
			Latest:        "250ms | slow search",
			Constraints:   []string{"postgres only | elasticsearch", "120ms"},
			Done:          []string{"0042_pg_trgm | gin", "make e2e & pass | 23 passed | e2e passes", "97ms", "slow search | 250ms & warn"},
			Stale:         []string{"port 5432 is already in use | port 5432 | 5432 in use"},
			Entities:      []string{"docker-compose.e2e.yml", "E2E_PG_PORT", "search/handler.go", "scripts/bench_search.sh", "97ms"},
			ModifiedFiles: []string{"docker-compose.e2e.yml", "migrations/0042_pg_trgm.sql", "search/handler.go", "search/query.go"},
		}),
		keeping(90, "repeat-auth-idle-timeout", "a second compaction mid-task: logout finished, the idle timeout in progress", func(s *Script) {
			s.User("Move the admin app's sessions to Redis.")
			s.Say("On it.")
			s.Mark("kept")
			s.User("Continue with logout.")
			s.Compaction(authPrevSummary, "kept", []string{"internal/http/login.go"}, []string{"internal/http/login.go", "internal/session/store.go"})
			s.Do("Writing the logout handler.", Write("internal/http/logout.go", "package http\n\nfunc (s *Server) logout(w http.ResponseWriter, r *http.Request) {\n\tif c, err := r.Cookie(\"sid\"); err == nil {\n\t\t_ = s.sessions.Delete(r.Context(), c.Value)\n\t}\n\thttp.SetCookie(w, &http.Cookie{Name: \"sid\", Value: \"\", Path: \"/\", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})\n\thttp.Redirect(w, r, \"/login\", http.StatusSeeOther)\n}\n"))
			s.Do("", Sh("go test ./internal/http/ -run Logout", "ok  \tgithub.com/acme/admin/internal/http\t0.044s"))
			s.Say("Logout is done: `internal/http/logout.go` deletes `session:<sid>` from Redis and expires the `sid` cookie; the test passes.")
			s.User("Good. Now the idle timeout: 30 minutes without a request ends the session. Also, the security team says the absolute lifetime must be 8 hours, not 24.")
			s.Do("Idle timeout: I'll store last_seen in the session and refresh the TTL on each request (sliding 30m), and cap the absolute lifetime at 8h from created_at.", Read("internal/session/store.go", "type Session struct {\n\tID        string\n\tUserID    int64\n\tCreatedAt time.Time\n}\n\nconst ttl = 24 * time.Hour\n"))
			s.Do("", Edit("internal/session/store.go", "\tCreatedAt time.Time\n}\n\nconst ttl = 24 * time.Hour", "\tCreatedAt time.Time\n\tLastSeen  time.Time\n}\n\nconst (\n\tidleTimeout = 30 * time.Minute\n\tmaxLifetime = 8 * time.Hour\n)"))
			s.Do("Now the middleware that refreshes LastSeen and enforces both limits.", Write("internal/http/session_mw.go", "package http\n\nfunc (s *Server) withSession(next http.Handler) http.Handler {\n\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n\t\tsess, err := s.sessions.FromRequest(r)\n\t\tif err != nil || sess.Expired(time.Now()) {\n\t\t\thttp.Redirect(w, r, \"/login\", http.StatusSeeOther)\n\t\t\treturn\n\t\t}\n\t\t// TODO: Touch(sess) to slide the idle timeout\n\t\tnext.ServeHTTP(w, r.WithContext(withSess(r.Context(), sess)))\n\t})\n}\n"))
			s.Do("", ShFail("go build ./...", "internal/http/session_mw.go:6:39: sess.Expired undefined (type *session.Session has no field or method Expired)\ninternal/session/store.go:41:22: undefined: ttl", 1))
			s.Do("Expected: Expired and Touch are not written yet, and Save still uses the old ttl constant. Next: add Session.Expired (idle 30m or 8h since CreatedAt), Store.Touch, and replace ttl in Save.", Read("internal/session/store.go", "func (st *Store) Save(ctx context.Context, s *Session) error {\n\tb, _ := json.Marshal(s)\n\treturn st.rdb.Set(ctx, \"session:\"+s.ID, b, ttl).Err()\n}\n"))
		}, Expect{
			Goal:          []string{"redis & session"},
			Latest:        "idle | 30 minutes | 30m",
			Constraints:   []string{"login form | routes unchanged", "crypto/rand", "8 hours | 8h"},
			Done:          []string{"logout", "store.go | redis-backed store | store"},
			InProgress:    []string{"idle timeout | idle"},
			Blocked:       []string{"expired undefined | undefined: ttl | go build"},
			Next:          []string{"expired", "touch", "ttl | save"},
			Entities:      []string{"internal/http/logout.go", "internal/http/session_mw.go", "internal/session/store.go", "session:<sid>", "Expired"},
			ModifiedFiles: []string{"internal/http/login.go", "internal/http/logout.go", "internal/http/session_mw.go", "internal/session/store.go"},
		}),
		keeping(300, "repeat-etl-split-turn", "a second compaction that splits a long turn: the previous summary, then a turn prefix", func(s *Script) {
			s.User("Port the nightly ETL to Airflow.")
			s.Say("Starting.")
			s.Mark("kept")
			s.User("Continue the backfill.")
			s.Compaction(etlPrevSummary, "kept", []string{"etl/nightly.py"}, []string{"dags/nightly_etl.py"})
			s.Do("", Sh("airflow dags backfill nightly_etl -s 2026-10-01 -e 2026-10-31 --reset-dagruns -y", "[2026-11-07 10:02:11] INFO - Backfill done for 31 dag runs. 31 succeeded, 0 failed."))
			s.Do("October is backfilled into analytics_dev. Comparing row counts with the cron job's tables.", Sh("psql \"$WAREHOUSE_DEV_URL\" -At -c \"select 'orders', count(*) from analytics_dev.daily_orders where day between '2026-10-01' and '2026-10-31' union all select 'refunds', count(*) from analytics_dev.daily_refunds where day between '2026-10-01' and '2026-10-31'\"", "orders|31\nrefunds|29"),
				Sh("psql \"$WAREHOUSE_RO_URL\" -At -c \"select 'orders', count(*) from analytics.daily_orders where day between '2026-10-01' and '2026-10-31' union all select 'refunds', count(*) from analytics.daily_refunds where day between '2026-10-01' and '2026-10-31'\"", "orders|31\nrefunds|31"))
			s.Say("October backfill: 31 runs succeeded. daily_orders matches the cron tables (31 days), but daily_refunds has 29 days in analytics_dev against 31 in analytics: two days are missing.")
			s.User("Find which two days are missing from daily_refunds and why, and fix the DAG. Remember, read-only on analytics.")
			s.Do("Listing the days present in each.", Sh("psql \"$WAREHOUSE_DEV_URL\" -At -c \"select g::date from generate_series('2026-10-01'::date, '2026-10-31', '1 day') g except select day from analytics_dev.daily_refunds order by 1\"", "2026-10-12\n2026-10-26"))
			s.Do("2026-10-12 and 2026-10-26 are both Sundays after a Saturday with no refunds. Reading the transform.", Read("dags/nightly_etl.py", "def transform_refunds(ti):\n    rows = ti.xcom_pull(task_ids=\"extract\", key=\"refunds\")\n    if not rows:\n        raise AirflowSkipException(\"no refunds\")\n    return aggregate(rows, by=\"day\")\n\n\ndef load_refunds(ti):\n    ...\n"+stringsRepeat("# load helpers\n", 120)))
			s.Do("Found it: transform_refunds raises AirflowSkipException when extract returns no rows, so the load task is skipped and no zero row is written for that day. The cron job wrote a row with count 0. The fix is to return an empty aggregate with a zero row instead of skipping.", Edit("dags/nightly_etl.py", "    if not rows:\n        raise AirflowSkipException(\"no refunds\")\n    return aggregate(rows, by=\"day\")", "    if not rows:\n        return [{\"day\": ti.execution_date.date(), \"refunds\": 0, \"amount_cents\": 0}]\n    return aggregate(rows, by=\"day\")"))
			s.Do("Re-running the two days.", Sh("airflow dags backfill nightly_etl -s 2026-10-12 -e 2026-10-12 --reset-dagruns -y && airflow dags backfill nightly_etl -s 2026-10-26 -e 2026-10-26 --reset-dagruns -y", "[2026-11-07 10:31:40] INFO - Backfill done for 1 dag runs. 1 succeeded, 0 failed.\n[2026-11-07 10:32:18] INFO - Backfill done for 1 dag runs. 1 succeeded, 0 failed."))
			s.Do("", Sh("psql \"$WAREHOUSE_DEV_URL\" -At -c \"select count(*) from analytics_dev.daily_refunds where day between '2026-10-01' and '2026-10-31'\"", "31"))
		}, Expect{
			Goal:          []string{"airflow | nightly etl"},
			Latest:        "daily_refunds & missing | two days",
			Constraints:   []string{"analytics_dev | read-only | never write to the analytics schema", "same output tables | analytics.daily_orders"},
			Done:          []string{"31 succeeded | 31 dag runs | 31 runs", "dags/nightly_etl.py"},
			InProgress:    []string{"missing"},
			Next:          []string{"daily_refunds | row counts | compare | verify"},
			Entities:      []string{"analytics_dev", "dags/nightly_etl.py", "2026-10-12", "2026-10-26", "AirflowSkipException", "daily_refunds"},
			ReadFiles:     []string{"etl/nightly.py"},
			ModifiedFiles: []string{"dags/nightly_etl.py"},
		}),
	}
}

func stringsRepeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}
