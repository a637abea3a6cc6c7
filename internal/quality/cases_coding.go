package quality

// Coding sessions: long tasks with failures and fixes, constraints stated late, plans
// stated by the assistant, sessions that end mid-task.

const workerGo = `package queue

import (
	"context"
	"sync"
	"time"
)

// Worker runs jobs from a channel until it is drained.
type Worker struct {
	jobs    chan Job
	wg      sync.WaitGroup
	done    int
	timeout time.Duration
}

// NewWorker starts n goroutines reading jobs.
func NewWorker(n int, jobs chan Job) *Worker {
	w := &Worker{jobs: jobs, timeout: 30 * time.Second}
	for i := 0; i < n; i++ {
		go w.loop()
	}
	return w
}

func (w *Worker) loop() {
	for j := range w.jobs {
		w.wg.Add(1)
		j.Run(context.Background())
		w.done++
		w.wg.Done()
	}
}

// Drain waits for the jobs in flight, at most w.timeout.
func (w *Worker) Drain() int {
	close(w.jobs)
	ch := make(chan struct{})
	go func() { w.wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(w.timeout):
	}
	return w.done
}
`

const configGo = `package queue

import (
	"os"
	"strconv"
)

// Config is read from the environment once at start.
type Config struct {
	Workers int
	Queue   string
}

func FromEnv() Config {
	c := Config{Workers: 4, Queue: "default"}
	if v, err := strconv.Atoi(os.Getenv("QUEUE_WORKERS")); err == nil {
		c.Workers = v
	}
	if v := os.Getenv("QUEUE_NAME"); v != "" {
		c.Queue = v
	}
	return c
}
`

const ordersAPI = `package api

// ListOrdersRequest is the query of GET /v1/orders.
type ListOrdersRequest struct {
	CustomerID string ` + "`query:\"customer_id\"`" + `
	Status     string ` + "`query:\"status\"`" + `
}

// ListOrdersResponse is its answer.
type ListOrdersResponse struct {
	Orders []Order ` + "`json:\"orders\"`" + `
}

func (h *Handler) ListOrders(w http.ResponseWriter, r *http.Request) {
	var req ListOrdersRequest
	if err := decodeQuery(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	orders, err := h.store.ListOrders(r.Context(), req.CustomerID, req.Status)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, ListOrdersResponse{Orders: orders})
}
`

const ordersStore = `package store

func (s *Store) ListOrders(ctx context.Context, customerID, status string) ([]api.Order, error) {
	rows, err := s.db.QueryContext(ctx,
		"SELECT id, customer_id, status, total_cents, created_at FROM orders WHERE customer_id = $1 AND ($2 = '' OR status = $2) ORDER BY created_at DESC",
		customerID, status)
	if err != nil {
		return nil, fmt.Errorf("list orders: %w", err)
	}
	defer rows.Close()
	return scanOrders(rows)
}
`

func codingCases() []*Case {
	return []*Case{
		keeping(60, "go-flaky-test", "a flaky Go test fixed, then a new request cut mid-turn (split turn)", func(s *Script) {
			s.User("TestWorkerDrain in internal/queue is flaky on CI, roughly one run in ten fails. Find out why and fix it properly, no retries or sleeps in the test.")
			s.Do("Let me look at the worker and its test.", Read("internal/queue/worker.go", workerGo), Read("internal/queue/worker_test.go", "package queue\n\nfunc TestWorkerDrain(t *testing.T) {\n\tjobs := make(chan Job, 10)\n\tw := NewWorker(3, jobs)\n\tfor i := 0; i < 10; i++ {\n\t\tjobs <- noopJob{}\n\t}\n\tif got := w.Drain(); got != 10 {\n\t\tt.Fatalf(\"drained %d jobs, want 10\", got)\n\t}\n}\n"))
			s.Do("I'll reproduce it with many runs first.", ShFail("go test -count=50 -run TestWorkerDrain ./internal/queue/", "--- FAIL: TestWorkerDrain (0.00s)\n    worker_test.go:11: drained 9 jobs, want 10\n--- FAIL: TestWorkerDrain (0.00s)\n    worker_test.go:11: drained 8 jobs, want 10\nFAIL\nFAIL\tgithub.com/acme/jobs/internal/queue\t0.214s\nFAIL", 1))
			s.Do("Reproduced: 2 of 50 runs fail. The cause is a race in Worker.loop: wg.Add(1) runs after the job is taken from the channel, so Drain can see a zero WaitGroup while a job is between the receive and the Add, and w.done is incremented without synchronization. The fix is to Add once per goroutine before the loop starts and make done an atomic counter.",
				Edit("internal/queue/worker.go", "	done    int", "	done    atomic.Int64"),
				Edit("internal/queue/worker.go", "	for i := 0; i < n; i++ {\n		go w.loop()\n	}", "	w.wg.Add(n)\n	for i := 0; i < n; i++ {\n		go w.loop()\n	}"),
				Edit("internal/queue/worker.go", "	for j := range w.jobs {\n		w.wg.Add(1)\n		j.Run(context.Background())\n		w.done++\n		w.wg.Done()\n	}", "	defer w.wg.Done()\n	for j := range w.jobs {\n		j.Run(context.Background())\n		w.done.Add(1)\n	}"))
			s.Do("", Edit("internal/queue/worker.go", "	return w.done\n", "	return int(w.done.Load())\n"))
			s.Do("Running the same 50 iterations, with the race detector.", Sh("go test -race -count=50 -run TestWorkerDrain ./internal/queue/", "ok  \tgithub.com/acme/jobs/internal/queue\t1.873s"))
			s.Do("", Sh("go test -race ./...", "ok  \tgithub.com/acme/jobs/cmd/jobs\t0.031s\nok  \tgithub.com/acme/jobs/internal/queue\t0.402s\nok  \tgithub.com/acme/jobs/internal/store\t0.117s"))
			s.Say("Fixed. The race was in `Worker.loop`: `wg.Add(1)` happened after a job was received, so `Drain` could return while a job was in flight, and `done` was a plain int written from several goroutines. Each goroutine now does `wg.Add` before it starts and `done` is an `atomic.Int64`. `go test -race -count=50 -run TestWorkerDrain ./internal/queue/` passes, and so does `go test -race ./...`.")
			s.User("Great. Now make the drain timeout configurable with a QUEUE_DRAIN_TIMEOUT env var (a Go duration, default 30s). Don't change the NewWorker signature, other services call it.")
			s.Do("I'll read the config first and then add the field.", Read("internal/queue/config.go", configGo))
			s.Do("The timeout goes into Config, and NewWorker keeps its signature; a new option setter, WithDrainTimeout, applies it.",
				Edit("internal/queue/config.go", "	Queue   string\n}", "	Queue   string\n	// DrainTimeout bounds Worker.Drain (QUEUE_DRAIN_TIMEOUT, default 30s).\n	DrainTimeout time.Duration\n}"),
				Edit("internal/queue/config.go", "	c := Config{Workers: 4, Queue: \"default\"}", "	c := Config{Workers: 4, Queue: \"default\", DrainTimeout: 30 * time.Second}\n	if d, err := time.ParseDuration(os.Getenv(\"QUEUE_DRAIN_TIMEOUT\")); err == nil && d > 0 {\n		c.DrainTimeout = d\n	}"))
			s.Do("Now the setter on Worker.", Edit("internal/queue/worker.go", "// Drain waits", "// WithDrainTimeout sets how long Drain waits.\nfunc (w *Worker) WithDrainTimeout(d time.Duration) *Worker { w.timeout = d; return w }\n\n// Drain waits"))
			s.Do("Building to check the edits compile.", ShFail("go build ./...", "# github.com/acme/jobs/internal/queue\ninternal/queue/config.go:14:15: undefined: time", 1))
			s.Do("The import of time is missing in config.go.", Edit("internal/queue/config.go", "import (\n\t\"os\"\n\t\"strconv\"\n)", "import (\n\t\"os\"\n\t\"strconv\"\n\t\"time\"\n)"))
			s.Do("", Sh("go build ./...", ""))
			s.Do("It builds. Next I'll wire WithDrainTimeout in cmd/jobs/main.go and add a test for the env parsing.", Read("cmd/jobs/main.go", "package main\n\nfunc main() {\n\tcfg := queue.FromEnv()\n\tw := queue.NewWorker(cfg.Workers, jobs)\n\t// ...\n}\n"))
		}, Expect{
			Goal:          []string{"TestWorkerDrain & flaky"},
			Latest:        "QUEUE_DRAIN_TIMEOUT",
			Constraints:   []string{"no retries | sleeps", "NewWorker & signature"},
			Done:          []string{"TestWorkerDrain & race | fixed | pass", "atomic", "go test -race & pass | ok"},
			InProgress:    []string{"QUEUE_DRAIN_TIMEOUT | DrainTimeout | WithDrainTimeout"},
			Next:          []string{"WithDrainTimeout | QUEUE_DRAIN_TIMEOUT | drain timeout"},
			Stale:         []string{"drained 9 jobs | fail: testworkerdrain", "undefined: time"},
			Entities:      []string{"internal/queue/worker.go", "QUEUE_DRAIN_TIMEOUT", "WithDrainTimeout", "NewWorker", "atomic.Int64"},
			ReadFiles:     []string{"internal/queue/worker_test.go"},
			ModifiedFiles: []string{"internal/queue/config.go", "internal/queue/worker.go"},
		}),
		keeping(200, "ts-rename-midway", "a rename across files, the package manager constrained late, ending mid-refactor", func(s *Script) {
			s.User("Rename fetchUser to getUser everywhere in the web app (src/). It's exported from src/api/users.ts. Keep the old name as a deprecated alias for one release.")
			s.Do("I'll find every use first.", Sh("rg -n \"fetchUser\" src/", "src/api/users.ts:12:export async function fetchUser(id: string): Promise<User> {\nsrc/pages/Profile.tsx:4:import { fetchUser } from \"../api/users\";\nsrc/pages/Profile.tsx:19:    fetchUser(params.id).then(setUser);\nsrc/pages/Admin.tsx:3:import { fetchUser, listUsers } from \"../api/users\";\nsrc/pages/Admin.tsx:41:  const u = await fetchUser(id);\nsrc/hooks/useUser.ts:2:import { fetchUser } from \"../api/users\";\nsrc/hooks/useUser.ts:9:  return useQuery([\"user\", id], () => fetchUser(id));\nsrc/components/UserCard.tsx:5:import { fetchUser } from \"../api/users\";\nsrc/components/UserCard.tsx:22:    fetchUser(userId).then(setData);\nsrc/components/Mentions.tsx:8:import { fetchUser } from \"../api/users\";\nsrc/components/Mentions.tsx:30:  const users = await Promise.all(ids.map(fetchUser));\nsrc/api/__tests__/users.test.ts:1:import { fetchUser } from \"../users\";\nsrc/api/__tests__/users.test.ts:14:  const u = await fetchUser(\"42\");"))
			s.Do("Seven files use it. Plan:\n1. Rename the function in src/api/users.ts and export fetchUser as a deprecated alias.\n2. Update the pages: src/pages/Profile.tsx and src/pages/Admin.tsx.\n3. Update src/hooks/useUser.ts.\n4. Update the components: src/components/UserCard.tsx and src/components/Mentions.tsx.\n5. Update src/api/__tests__/users.test.ts.\n6. Run the type check and the tests.",
				Edit("src/api/users.ts", "export async function fetchUser(id: string): Promise<User> {", "export async function getUser(id: string): Promise<User> {"),
				Edit("src/api/users.ts", "export async function listUsers", "/** @deprecated Use getUser; removed in 3.0. */\nexport const fetchUser = getUser;\n\nexport async function listUsers"))
			s.Do("Type-checking the alias.", ShFail("npm run typecheck", "npm ERR! code ENOENT\nnpm ERR! syscall open\nnpm ERR! path /home/dev/src/web/package-lock.json\nnpm ERR! enoent Could not read package-lock.json", 1))
			s.User("Stop using npm here, this repo is pnpm only. And don't touch anything under src/legacy/, it's being deleted.")
			s.Do("Understood, pnpm only, and src/legacy/ stays as it is.", Sh("pnpm tsc --noEmit", ""))
			s.Do("The alias type-checks. Now the pages.",
				Edit("src/pages/Profile.tsx", "import { fetchUser } from \"../api/users\";", "import { getUser } from \"../api/users\";"),
				Edit("src/pages/Profile.tsx", "    fetchUser(params.id).then(setUser);", "    getUser(params.id).then(setUser);"),
				Edit("src/pages/Admin.tsx", "import { fetchUser, listUsers } from \"../api/users\";", "import { getUser, listUsers } from \"../api/users\";"),
				Edit("src/pages/Admin.tsx", "  const u = await fetchUser(id);", "  const u = await getUser(id);"))
			s.Do("And the hook.", Edit("src/hooks/useUser.ts", "import { fetchUser } from \"../api/users\";", "import { getUser } from \"../api/users\";"),
				Edit("src/hooks/useUser.ts", "() => fetchUser(id)", "() => getUser(id)"))
			s.Do("Checking what is left.", Sh("rg -n \"fetchUser\" src/ --glob '!src/legacy/**'", "src/api/users.ts:31:export const fetchUser = getUser;\nsrc/components/UserCard.tsx:5:import { fetchUser } from \"../api/users\";\nsrc/components/UserCard.tsx:22:    fetchUser(userId).then(setData);\nsrc/components/Mentions.tsx:8:import { fetchUser } from \"../api/users\";\nsrc/components/Mentions.tsx:30:  const users = await Promise.all(ids.map(fetchUser));\nsrc/api/__tests__/users.test.ts:1:import { fetchUser } from \"../users\";\nsrc/api/__tests__/users.test.ts:14:  const u = await fetchUser(\"42\");"))
			s.Do("Pages and the hook are done; the two components and the test still use the old name. Next: src/components/UserCard.tsx.", Read("src/components/UserCard.tsx", "import { useEffect, useState } from \"react\";\nimport { fetchUser } from \"../api/users\";\n\nexport function UserCard({ userId }: { userId: string }) {\n  const [data, setData] = useState<User | null>(null);\n  useEffect(() => {\n    fetchUser(userId).then(setData);\n  }, [userId]);\n  return data ? <div className=\"card\">{data.name}</div> : null;\n}\n"))
		}, Expect{
			Goal:          []string{"fetchUser & getUser"},
			Constraints:   []string{"pnpm", "src/legacy", "deprecated | alias"},
			Done:          []string{"users.ts & getuser | alias", "Profile.tsx | Admin.tsx | pages", "useUser"},
			InProgress:    []string{"UserCard | components | Mentions"},
			Next:          []string{"UserCard.tsx | Mentions.tsx | components", "users.test.ts | test", "pnpm tsc --noEmit | type check | typecheck"},
			Stale:         []string{"package-lock.json | enoent"},
			Entities:      []string{"src/api/users.ts", "src/components/UserCard.tsx", "src/components/Mentions.tsx", "src/api/__tests__/users.test.ts", "pnpm tsc --noEmit", "getUser"},
			ModifiedFiles: []string{"src/api/users.ts", "src/hooks/useUser.ts", "src/pages/Admin.tsx", "src/pages/Profile.tsx"},
		}),
		lastTurn("py-migration-backfill", "an Alembic migration that first fails on the database, then a backfill with a late batch limit", func(s *Script) {
			s.User("Add a due_date column (date, nullable) to the invoices table with an Alembic migration, and expose it in the Invoice schema in app/schemas/invoice.py.")
			s.Do("Looking at the latest migration and the model.", Sh("ls migrations/versions/ | tail -3", "2f9c1a7b3e10_add_invoice_currency.py\n3f2a1c9d8e7b_index_invoices_customer.py\n__init__.py"),
				Read("app/models/invoice.py", "class Invoice(Base):\n    __tablename__ = \"invoices\"\n\n    id = Column(Integer, primary_key=True)\n    customer_id = Column(Integer, ForeignKey(\"customers.id\"), nullable=False)\n    amount_cents = Column(Integer, nullable=False)\n    currency = Column(String(3), nullable=False, default=\"EUR\")\n    issued_at = Column(DateTime, nullable=False)\n"))
			s.Do("Generating the migration.", Sh("alembic revision -m \"add invoices.due_date\"", "  Generating /home/dev/src/py-migration-backfill/migrations/versions/7b1e4d2c9a0f_add_invoices_due_date.py ...  done"))
			s.Do("Filling in upgrade and downgrade, and the model column.",
				Edit("migrations/versions/7b1e4d2c9a0f_add_invoices_due_date.py", "def upgrade() -> None:\n    pass", "def upgrade() -> None:\n    op.add_column(\"invoices\", sa.Column(\"due_date\", sa.Date(), nullable=True))"),
				Edit("migrations/versions/7b1e4d2c9a0f_add_invoices_due_date.py", "def downgrade() -> None:\n    pass", "def downgrade() -> None:\n    op.drop_column(\"invoices\", \"due_date\")"),
				Edit("app/models/invoice.py", "    issued_at = Column(DateTime, nullable=False)\n", "    issued_at = Column(DateTime, nullable=False)\n    due_date = Column(Date, nullable=True)\n"))
			s.Do("Applying it locally.", ShFail("alembic upgrade head", "Traceback (most recent call last):\n  ...\nsqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at \"localhost\" (127.0.0.1), port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?", 1))
			s.Say("The migration is written, but `alembic upgrade head` cannot reach Postgres on localhost:5432 (connection refused). Is the database supposed to run locally?")
			s.User("It runs in docker, do `docker compose up -d db` first. And never point alembic at the prod DATABASE_URL from .env.production.")
			s.Do("Starting the database container.", Sh("docker compose up -d db", "[+] Running 2/2\n ✔ Network py-migration-backfill_default  Created\n ✔ Container py-migration-backfill-db-1  Started"))
			s.Do("", Sh("alembic upgrade head", "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\nINFO  [alembic.runtime.migration] Will assume transactional DDL.\nINFO  [alembic.runtime.migration] Running upgrade 3f2a1c9d8e7b -> 7b1e4d2c9a0f, add invoices.due_date"))
			s.Do("Migration applied. Now the schema.", Edit("app/schemas/invoice.py", "    issued_at: datetime\n", "    issued_at: datetime\n    due_date: date | None = None\n"))
			s.Do("", Sh("pytest tests/test_invoices.py -q", "........                                                                 [100%]\n8 passed in 1.42s"))
			s.Say("Done: migration `7b1e4d2c9a0f` adds `invoices.due_date` (nullable date) and is applied to the local database; `Invoice.due_date` is in the model and in `app/schemas/invoice.py`; `pytest tests/test_invoices.py` passes (8 tests).")
			s.User("Now backfill due_date as issued_at + 30 days for existing invoices. Write it as a script in scripts/, not as part of the migration. Batches of at most 1000 rows, we have 4 million invoices and the table is hot.")
			s.Do("I'll write scripts/backfill_due_date.py with keyset batches of 1000 and a --dry-run flag.",
				Write("scripts/backfill_due_date.py", "\"\"\"Backfill invoices.due_date = issued_at + 30 days, 1000 rows at a time.\"\"\"\nimport argparse\n\nBATCH = 1000\n\ndef main():\n    ap = argparse.ArgumentParser()\n    ap.add_argument(\"--dry-run\", action=\"store_true\")\n    args = ap.parse_args()\n    last_id = 0\n    while True:\n        ids = fetch_ids(last_id, BATCH)\n        if not ids:\n            break\n        if not args.dry_run:\n            update(ids)\n        last_id = ids[-1]\n\nif __name__ == \"__main__\":\n    main()\n"))
			s.Do("Dry run against the local database.", Sh("python scripts/backfill_due_date.py --dry-run", "batch 1: ids 1..1000 (dry run)\nbatch 2: ids 1001..2000 (dry run)\nbatch 3: ids 2001..2417 (dry run)\n3 batches, 2417 rows would be updated"))
			s.Say("The backfill script is in `scripts/backfill_due_date.py`: keyset batches of 1000 rows by id, `--dry-run` prints the batches without writing. The dry run on the local database covers 2417 rows in 3 batches. I have not run it for real; say when, and against which database.")
			s.User("Before it runs for real, here is the plan of the batch query on staging. Is it using the primary key?\n\n```\n" + explainPlan + "```")
		}, Expect{
			Goal:          []string{"due_date & invoices"},
			Latest:        "backfill",
			Constraints:   []string{"docker compose up -d db | docker", "prod | .env.production", "1000", "scripts/ | not as part of the migration | not in the migration"},
			Done:          []string{"7b1e4d2c9a0f & applied | upgrade | running upgrade", "app/schemas/invoice.py | schema", "8 passed | 8 tests", "backfill_due_date.py", "2417 | 3 batches"},
			Next:          []string{"backfill_due_date.py | backfill"},
			Stale:         []string{"connection refused | 5432 | operationalerror"},
			Entities:      []string{"7b1e4d2c9a0f", "scripts/backfill_due_date.py", "docker compose up -d db", "app/schemas/invoice.py", "2417"},
			ModifiedFiles: []string{"app/models/invoice.py", "app/schemas/invoice.py", "migrations/versions/7b1e4d2c9a0f_add_invoices_due_date.py", "scripts/backfill_due_date.py"},
		}),
		lastTurn("rust-borrow-clippy", "clippy warnings and a borrow error fixed, the task finished, an offer left open", func(s *Script) {
			s.User("Make `cargo clippy -- -D warnings` pass in the cache crate. No unsafe, and don't change the public API of LruCache.")
			s.Do("Running clippy to see the warnings.", ShFail("cargo clippy -p cache -- -D warnings", "error: this `if let` can be collapsed into the outer `if let`\n  --> crates/cache/src/lru.rs:48:13\nerror: you seem to be trying to use `match` for destructuring a single pattern\n  --> crates/cache/src/lru.rs:71:9\nerror: redundant clone\n  --> crates/cache/src/entry.rs:19:31\nerror: could not compile `cache` (lib) due to 3 previous errors", 101))
			s.Do("Three lints. Reading the files.", Read("crates/cache/src/lru.rs", "impl<K: Hash + Eq + Clone, V> LruCache<K, V> {\n    pub fn get(&mut self, k: &K) -> Option<&V> {\n        if let Some(idx) = self.map.get(k) {\n            if let Some(node) = self.nodes.get(*idx) {\n                let v = &node.value;\n                self.touch(*idx);\n                return Some(v);\n            }\n        }\n        None\n    }\n}\n"), Read("crates/cache/src/entry.rs", "pub(crate) struct Entry<K, V> { pub key: K, pub value: V, pub prev: usize, pub next: usize }\n\nimpl<K: Clone, V> Entry<K, V> {\n    pub fn new(key: &K, value: V) -> Self { Entry { key: key.clone().clone(), value, prev: NIL, next: NIL } }\n}\n"))
			s.Do("Collapsing the if-lets, using if let for the single-arm match, dropping the second clone.",
				Edit("crates/cache/src/lru.rs", "        if let Some(idx) = self.map.get(k) {\n            if let Some(node) = self.nodes.get(*idx) {", "        if let Some(node) = self.map.get(k).and_then(|idx| self.nodes.get(*idx)) {"),
				Edit("crates/cache/src/entry.rs", "key.clone().clone()", "key.clone()"))
			s.Do("", ShFail("cargo test -p cache", "error[E0502]: cannot borrow `*self` as mutable because it is also borrowed as immutable\n  --> crates/cache/src/lru.rs:50:17\n   |\n48 |         if let Some(node) = self.map.get(k).and_then(|idx| self.nodes.get(*idx)) {\n   |                                                            ---------- immutable borrow occurs here\n49 |             let v = &node.value;\n50 |             self.touch(node.index);\n   |             ^^^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here\nerror: could not compile `cache` (lib test) due to 1 previous error", 101))
			s.Do("The borrow checker rejects touching while `node` borrows `self.nodes`. The fix is to copy the index out first, touch, then borrow again.",
				Edit("crates/cache/src/lru.rs", "        if let Some(node) = self.map.get(k).and_then(|idx| self.nodes.get(*idx)) {\n            let v = &node.value;\n            self.touch(node.index);\n            return Some(v);\n        }\n        None", "        let idx = *self.map.get(k)?;\n        self.touch(idx);\n        self.nodes.get(idx).map(|n| &n.value)"))
			s.Do("", Sh("cargo test -p cache", "running 14 tests\n..............\ntest result: ok. 14 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s"))
			s.Do("", Sh("cargo clippy -p cache -- -D warnings", "    Checking cache v0.4.2 (/home/dev/src/rust-borrow-clippy/crates/cache)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 1.92s"))
			s.Say("`cargo clippy -p cache -- -D warnings` is clean and `cargo test -p cache` passes (14 tests). `LruCache::get` now copies the index out before `touch`, which also fixed the E0502 borrow error the first version of the change caused; the public API is unchanged and there is no unsafe. I can also run clippy on the whole workspace if you want.")
			s.User("Next, `cargo bench -p cache` panics on the eviction benchmark. Output:\n\n```\n" + benchPanic + "```\n\nCan you look at that?")
		}, Expect{
			Goal:          []string{"cargo clippy & warnings"},
			Constraints:   []string{"unsafe", "LruCache & API"},
			Done:          []string{"clippy & clean | pass | finished", "14 passed | 14 tests"},
			Next:          []string{"workspace"},
			Stale:         []string{"e0502 | cannot borrow", "collapsed | redundant clone | could not compile"},
			Entities:      []string{"cargo clippy -p cache -- -D warnings", "crates/cache/src/lru.rs", "LruCache", "cargo test -p cache"},
			ModifiedFiles: []string{"crates/cache/src/entry.rs", "crates/cache/src/lru.rs"},
		}),
		lastTurn("harness-noise-csv", "a request wrapped in harness text (system reminders, a skill block); the fix is verified", func(s *Script) {
			s.User("<system-reminder>\nThe user's TODO list is empty. Do not mention this to the user. Use the todo tool when a task has several steps.\n</system-reminder>\n\n<skill name=\"python-testing\" location=\"/home/dev/.pi/agent/skills/python-testing/SKILL.md\">\nReferences are relative to /home/dev/.pi/agent/skills/python-testing.\n\n# Python testing\n\nUse pytest. Put regression tests next to the module under tests/. Prefer parametrize over loops.\n</skill>\n\nThe CSV export in reports/export.py drops rows whose note contains a newline. Fix it and add a regression test.")
			s.Do("Reading the exporter.", Read("reports/export.py", "import csv\n\n\ndef export_rows(rows, out):\n    w = csv.writer(out)\n    w.writerow([\"id\", \"customer\", \"note\"])\n    for r in rows:\n        if \"\\n\" in r.note:\n            continue  # TODO: multi-line notes break the importer\n        w.writerow([r.id, r.customer, r.note])\n"))
			s.Do("The exporter skips those rows on purpose, with a TODO about the importer. csv.writer quotes fields with newlines already, so the skip can go; I'll check the importer reads quoted newlines.", Read("reports/importer.py", "import csv\n\n\ndef read_rows(f):\n    return list(csv.DictReader(f))\n"))
			s.Do("csv.DictReader handles quoted newlines as long as the file is opened with newline=''. Removing the skip and adding the test.",
				Edit("reports/export.py", "        if \"\\n\" in r.note:\n            continue  # TODO: multi-line notes break the importer\n", ""),
				Write("tests/test_export.py", "import io\n\nimport pytest\n\nfrom reports.export import export_rows\nfrom reports.importer import read_rows\n\n\n@pytest.mark.parametrize(\"note\", [\"plain\", \"two\\nlines\", \"quote \\\" and\\r\\nCRLF\"])\ndef test_round_trip_keeps_multiline_notes(note):\n    out = io.StringIO(newline=\"\")\n    export_rows([Row(1, \"acme\", note)], out)\n    out.seek(0)\n    assert read_rows(out)[0][\"note\"] == note\n"))
			s.Do("", ShFail("pytest tests/test_export.py -q", "F..\n=================================== FAILURES ===================================\n_____________ test_round_trip_keeps_multiline_notes[quote \" and\\r\\nCRLF] _____________\nE       AssertionError: assert 'quote \" and\\nCRLF' == 'quote \" and\\r\\nCRLF'\n1 failed, 2 passed in 0.08s", 1))
			s.Do("The CRLF case fails because the test's StringIO translates \\r\\n. The test should not use newline translation: io.StringIO(newline=\"\") is right, but read_rows needs the same; the importer opens files in callers. The fix is in the test helper, not the exporter.",
				Edit("tests/test_export.py", "    out.seek(0)\n    assert read_rows(out)[0][\"note\"] == note", "    data = io.StringIO(out.getvalue(), newline=\"\")\n    assert read_rows(data)[0][\"note\"] == note"))
			s.Do("", Sh("pytest tests/test_export.py -q", "...                                                                      [100%]\n3 passed in 0.05s"))
			s.Say("Fixed: `reports/export.py` no longer skips rows whose note has a newline (the csv writer quotes them), and `tests/test_export.py` round-trips plain, multi-line and CRLF notes through the exporter and `reports/importer.py`; 3 passed.")
			s.User("<system-reminder>\nThe user's TODO list is empty. Do not mention this to the user.\n</system-reminder>\n\nNext: the importer rejects this file from a customer, with BOM and semicolons. First lines:\n\n```\n" + customerCSV + "```")
		}, Expect{
			Goal:          []string{"reports/export.py | csv export & newline"},
			Done:          []string{"export.py & skip | no longer | newline", "tests/test_export.py", "3 passed"},
			Stale:         []string{"1 failed | assertionerror"},
			Entities:      []string{"reports/export.py", "tests/test_export.py"},
			Noise:         []string{"TODO list is empty", "References are relative to"},
			ReadFiles:     []string{"reports/importer.py"},
			ModifiedFiles: []string{"reports/export.py", "tests/test_export.py"},
		}),
		keeping(120, "css-late-constraint-e2e", "a UI toggle reworked after the user forbids inline styles; an e2e failure still open", func(s *Script) {
			s.User("Add a dark mode toggle to the settings page (src/pages/Settings.tsx). Persist the choice in localStorage.")
			s.Do("Reading the settings page.", Read("src/pages/Settings.tsx", "export function Settings() {\n  return (\n    <section>\n      <h1>Settings</h1>\n      <NotificationPrefs />\n    </section>\n  );\n}\n"))
			s.Do("Adding the toggle with a small hook.",
				Write("src/hooks/useTheme.ts", "import { useEffect, useState } from \"react\";\n\nexport function useTheme() {\n  const [dark, setDark] = useState(() => localStorage.getItem(\"theme\") === \"dark\");\n  useEffect(() => {\n    localStorage.setItem(\"theme\", dark ? \"dark\" : \"light\");\n    document.body.style.background = dark ? \"#111\" : \"#fff\";\n  }, [dark]);\n  return [dark, setDark] as const;\n}\n"),
				Edit("src/pages/Settings.tsx", "      <NotificationPrefs />", "      <NotificationPrefs />\n      <label style={{ display: \"flex\", gap: 8 }}>\n        <input type=\"checkbox\" checked={dark} onChange={(e) => setDark(e.target.checked)} /> Dark mode\n      </label>"))
			s.User("Please stop adding inline styles. Use the CSS modules in src/styles/ only. Also don't touch src/legacy/.")
			s.Do("Got it: no inline styles, CSS modules from src/styles/ only. Moving the styles out.", Read("src/styles/theme.module.css", ".light { --bg: #fff; --fg: #111; }\n.dark { --bg: #111; --fg: #eee; }\n"))
			s.Do("", Edit("src/hooks/useTheme.ts", "    document.body.style.background = dark ? \"#111\" : \"#fff\";", "    document.documentElement.classList.toggle(styles.dark, dark);"),
				Edit("src/pages/Settings.tsx", "      <label style={{ display: \"flex\", gap: 8 }}>", "      <label className={styles.toggle}>"),
				Edit("src/styles/settings.module.css", ".section {", ".toggle { display: flex; gap: 8px; }\n\n.section {"))
			s.Do("", Sh("pnpm vitest run src/hooks/useTheme.test.ts", " ✓ src/hooks/useTheme.test.ts (3 tests) 18ms\n\n Test Files  1 passed (1)\n      Tests  3 passed (3)"))
			s.Do("Unit tests pass. Running the e2e test for settings.", ShFail("pnpm playwright test e2e/settings.spec.ts", "Running 1 test using 1 worker\n  ✘  1 [chromium] › e2e/settings.spec.ts:14:3 › toggles dark mode (5.2s)\n\n    Error: Timed out 5000ms waiting for expect(locator).toHaveClass(expected)\n\n    Locator: locator('body')\n    Expected pattern: /dark/\n    Received string:  \"\"\n\n  1 failed\n    [chromium] › e2e/settings.spec.ts:14:3 › toggles dark mode", 1))
			s.Say("The toggle works and the unit tests pass, but the e2e test `e2e/settings.spec.ts:14` still fails: it expects the `dark` class on `body`, and the hook now sets it on `<html>` (`document.documentElement`). Next I'll change the test's locator to `html` rather than move the class, since the CSS variables are defined at the root, then rerun `pnpm playwright test e2e/settings.spec.ts`.")
		}, Expect{
			Goal:          []string{"dark mode & toggle"},
			Constraints:   []string{"inline styles", "src/styles | css modules", "src/legacy"},
			Done:          []string{"useTheme | toggle", "3 passed | unit tests & pass"},
			Blocked:       []string{"e2e/settings.spec.ts | toggles dark mode | e2e"},
			Next:          []string{"locator | html", "playwright"},
			Entities:      []string{"e2e/settings.spec.ts", "src/hooks/useTheme.ts", "pnpm playwright test e2e/settings.spec.ts", "document.documentElement"},
			ReadFiles:     []string{"src/styles/theme.module.css"},
			ModifiedFiles: []string{"src/hooks/useTheme.ts", "src/pages/Settings.tsx", "src/styles/settings.module.css"},
		}),
		keeping(150, "go-pagination-plan", "the assistant states a five-step plan and gets through two steps", func(s *Script) {
			s.User("GET /v1/orders returns every order of a customer at once, some have 40k orders. Add cursor pagination. Keyset, not OFFSET. Default page size 50, max 200.")
			s.Do("Reading the handler and the store.", Read("api/orders.go", ordersAPI), Read("store/orders.go", ordersStore))
			s.Do("Plan:\n1. Add `limit` and `cursor` to `ListOrdersRequest` in api/orders.go, with the 50/200 bounds.\n2. Implement keyset pagination in store/orders.go on (created_at, id).\n3. Return `next_cursor` in `ListOrdersResponse`.\n4. Document the parameters in api/openapi.yaml.\n5. Add tests in store/orders_test.go for page boundaries and ties on created_at.\n\nStarting with step 1.",
				Edit("api/orders.go", "	Status     string `query:\"status\"`\n}", "	Status     string `query:\"status\"`\n	Limit      int    `query:\"limit\"`\n	Cursor     string `query:\"cursor\"`\n}"),
				Edit("api/orders.go", "	orders, err := h.store.ListOrders(r.Context(), req.CustomerID, req.Status)", "	limit := clampLimit(req.Limit, 50, 200)\n	orders, err := h.store.ListOrders(r.Context(), req.CustomerID, req.Status, limit, req.Cursor)"))
			s.Do("Step 2: the store query. The cursor encodes the last (created_at, id) as base64 JSON.",
				Edit("store/orders.go", "func (s *Store) ListOrders(ctx context.Context, customerID, status string) ([]api.Order, error) {", "func (s *Store) ListOrders(ctx context.Context, customerID, status string, limit int, cursor string) ([]api.Order, error) {\n\tafter, err := decodeCursor(cursor)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"list orders: bad cursor: %w\", err)\n\t}"),
				Edit("store/orders.go", "ORDER BY created_at DESC\",\n\t\tcustomerID, status)", "AND (created_at, id) < ($3, $4) ORDER BY created_at DESC, id DESC LIMIT $5\",\n\t\tcustomerID, status, after.CreatedAt, after.ID, limit)"),
				Write("store/cursor.go", "package store\n\n// cursor is the position after the last row of a page.\ntype cursor struct {\n\tCreatedAt time.Time `json:\"t\"`\n\tID        int64     `json:\"id\"`\n}\n\nfunc decodeCursor(s string) (cursor, error) {\n\tif s == \"\" {\n\t\treturn cursor{CreatedAt: maxTime, ID: math.MaxInt64}, nil\n\t}\n\tb, err := base64.RawURLEncoding.DecodeString(s)\n\tif err != nil {\n\t\treturn cursor{}, err\n\t}\n\tvar c cursor\n\treturn c, json.Unmarshal(b, &c)\n}\n"))
			s.Do("Checking that it builds and the existing tests still pass.", Sh("go build ./... && go test ./store/ ./api/", "ok  \tgithub.com/acme/shop/store\t0.311s\nok  \tgithub.com/acme/shop/api\t0.094s"))
			s.Say("Steps 1 and 2 are in: `ListOrdersRequest` takes `limit` (default 50, max 200) and `cursor`, and `Store.ListOrders` pages by `(created_at, id)` with the cursor decoded in `store/cursor.go`. Build and existing tests pass. Remaining: step 3 (`next_cursor` in the response), step 4 (api/openapi.yaml) and step 5 (tests in store/orders_test.go).")
			s.User("ok continue")
			s.Say("Continuing with step 3.")
		}, Expect{
			Goal:          []string{"pagination & /v1/orders | orders"},
			Constraints:   []string{"keyset | offset", "50 & 200"},
			Done:          []string{"ListOrdersRequest | limit", "(created_at, id) | keyset | store/orders.go", "store/cursor.go | cursor"},
			InProgress:    []string{"next_cursor | step 3"},
			Next:          []string{"next_cursor", "openapi.yaml", "orders_test.go"},
			Entities:      []string{"api/orders.go", "store/orders.go", "next_cursor", "api/openapi.yaml", "store/orders_test.go", "ListOrdersRequest"},
			ModifiedFiles: []string{"api/orders.go", "store/cursor.go", "store/orders.go"},
		}),
		lastTurn("provider-error-retry", "a provider error on one turn, retried by the user, then a finished fix", func(s *Script) {
			s.User("The /healthz endpoint returns 200 even when Redis is down. Make it return 503 with {\"redis\":\"down\"} when the ping fails. Use the existing redis client in internal/cache, no new client.")
			s.Fail("529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}")
			s.User("try again")
			s.Do("Reading the health handler.", Read("internal/http/health.go", "package http\n\nfunc (s *Server) healthz(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(http.StatusOK)\n\tw.Write([]byte(`{\"status\":\"ok\"}`))\n}\n"), Read("internal/cache/client.go", "package cache\n\n// Client wraps go-redis.\ntype Client struct{ rdb *redis.Client }\n\nfunc (c *Client) Ping(ctx context.Context) error { return c.rdb.Ping(ctx).Err() }\n"))
			s.Do("The server holds a *cache.Client already; I'll ping with a 500ms timeout.",
				Edit("internal/http/health.go", "\tw.WriteHeader(http.StatusOK)\n\tw.Write([]byte(`{\"status\":\"ok\"}`))", "\tctx, cancel := context.WithTimeout(r.Context(), 500*time.Millisecond)\n\tdefer cancel()\n\tif err := s.cache.Ping(ctx); err != nil {\n\t\tw.WriteHeader(http.StatusServiceUnavailable)\n\t\tw.Write([]byte(`{\"redis\":\"down\"}`))\n\t\treturn\n\t}\n\tw.WriteHeader(http.StatusOK)\n\tw.Write([]byte(`{\"status\":\"ok\"}`))"),
				Write("internal/http/health_test.go", "package http\n\nfunc TestHealthzRedisDown(t *testing.T) {\n\ts := newTestServer(t, withCache(downCache{}))\n\trec := httptest.NewRecorder()\n\ts.healthz(rec, httptest.NewRequest(\"GET\", \"/healthz\", nil))\n\tif rec.Code != 503 || rec.Body.String() != `{\"redis\":\"down\"}` {\n\t\tt.Fatalf(\"got %d %s\", rec.Code, rec.Body)\n\t}\n}\n"))
			s.Do("", Sh("go test ./internal/http/ -run Healthz -v", "=== RUN   TestHealthzRedisDown\n--- PASS: TestHealthzRedisDown (0.00s)\nPASS\nok  \tgithub.com/acme/api/internal/http\t0.021s"))
			s.Say("`/healthz` now pings Redis through the existing `cache.Client` with a 500ms timeout and answers 503 `{\"redis\":\"down\"}` when the ping fails; `TestHealthzRedisDown` in `internal/http/health_test.go` covers it and passes.")
			s.User("Next one: the readiness probe flaps during deploys. Here are the events from the last rollout:\n\n```\n" + probeEvents + "```")
		}, Expect{
			Goal:          []string{"/healthz & 503"},
			Constraints:   []string{"internal/cache | existing redis client | no new client"},
			Done:          []string{"503 & ping | redis", "TestHealthzRedisDown & pass"},
			Stale:         []string{"overloaded"},
			Entities:      []string{"internal/http/health.go", "TestHealthzRedisDown", "{\"redis\":\"down\"}"},
			ReadFiles:     []string{"internal/cache/client.go"},
			ModifiedFiles: []string{"internal/http/health.go", "internal/http/health_test.go"},
		}),
		lastTurn("npm-peer-conflict", "a dependency upgrade blocked on a peer conflict the user must decide", func(s *Script) {
			s.User("Upgrade @tanstack/react-query from v4 to v5 in the dashboard app and fix the breaking changes.")
			s.Do("Checking the current versions.", Sh("cat package.json | jq '.dependencies'", "{\n  \"@tanstack/react-query\": \"^4.36.1\",\n  \"react\": \"^17.0.2\",\n  \"react-dom\": \"^17.0.2\",\n  \"react-router-dom\": \"^6.20.0\"\n}"))
			s.Do("", ShFail("npm install @tanstack/react-query@5", "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\nnpm ERR!\nnpm ERR! While resolving: dashboard@2.4.0\nnpm ERR! Found: react@17.0.2\nnpm ERR! node_modules/react\nnpm ERR!   react@\"^17.0.2\" from the root project\nnpm ERR!\nnpm ERR! Could not resolve dependency:\nnpm ERR! peer react@\"^18 || ^19\" from @tanstack/react-query@5.59.0", 1))
			s.Say("v5 needs React 18 or later (`peer react@\"^18 || ^19\"`), and the app is on React 17.0.2. I could install with `--legacy-peer-deps`, but v5 uses `useSyncExternalStore`, which React 17 does not have.")
			s.User("Don't use --force or --legacy-peer-deps. What would upgrading React to 18 involve?")
			s.Do("Looking for React 17-only APIs.", Sh("rg -n \"ReactDOM.render|unstable_batchedUpdates|findDOMNode\" src/", "src/index.tsx:9:ReactDOM.render(<App />, document.getElementById(\"root\"));\nsrc/components/Tooltip.tsx:27:    const el = findDOMNode(this);"))
			s.Say("Upgrading to React 18 would mean: `ReactDOM.render` in `src/index.tsx` becomes `createRoot(...).render`, `findDOMNode` in `src/components/Tooltip.tsx` (a class component) needs a ref instead, and `react-dom`/`@types/react` go to 18 too. Until React is on 18, the react-query upgrade is blocked by the ERESOLVE peer conflict. Do you want me to do the React 18 upgrade first, as a separate change?")
			s.User("Let me check with the team first. Meanwhile, here is the list of components QA flagged for the React 18 test pass:\n\n" + qaList)
		}, Expect{
			Goal:        []string{"react-query & v5"},
			Constraints: []string{"--force | --legacy-peer-deps"},
			Blocked:     []string{"ERESOLVE"},
			Next:        []string{"react 18 | createRoot | decide | confirm | user"},
			Entities:    []string{"src/index.tsx", "src/components/Tooltip.tsx", "findDOMNode", "ERESOLVE", "17.0.2"},
		}),
		lastTurn("docs-style-guide", "documentation work with style preferences, one of them stated late", func(s *Script) {
			s.User("Write a CONTRIBUTING.md for the repo: how to set up, run tests, and the commit message convention we use (Conventional Commits).")
			s.Do("Checking how the project builds and tests.", Read("Makefile", "test:\n\tgo test ./...\nlint:\n\tgolangci-lint run\nsetup:\n\tgo mod download && pre-commit install\n"), Sh("git log --oneline -5", "a81f3c2 fix(parser): handle empty frontmatter\n5d2e901 feat(cli): add --json output\n77c0b14 docs: fix typo in README\ne41a9d3 chore(deps): bump cobra to 1.8.1\n0b6f2aa test(parser): cover nested lists"))
			s.Do("Writing it.", Write("CONTRIBUTING.md", "# Contributing\n\n## Setup\n\nRun `make setup` (downloads modules and installs the pre-commit hooks).\n\n## Tests\n\n`make test` runs the unit tests; `make lint` runs golangci-lint.\n\n## Commits\n\nWe use Conventional Commits: `type(scope): summary`, e.g. `fix(parser): handle empty frontmatter`.\n"))
			s.Say("`CONTRIBUTING.md` covers setup (`make setup`), tests (`make test`, `make lint`) and the Conventional Commits format with an example from the history.")
			s.User("Use British spelling throughout, and keep it under 80 lines. Also add a section on how to report security issues: email security@fernhill.dev, never a public issue.")
			s.Do("Adding the security section.", Edit("CONTRIBUTING.md", "## Commits\n", "## Reporting security issues\n\nEmail security@fernhill.dev. Please never open a public issue for a vulnerability.\n\n## Commits\n"))
			s.Do("", Sh("wc -l CONTRIBUTING.md && grep -n -i -E 'ize|yze|color' CONTRIBUTING.md", "19 CONTRIBUTING.md"))
			s.Say("Added the security section (email security@fernhill.dev, no public issues). The file is 19 lines and has no American spellings to change.")
			s.User("Also add this as CODE_OF_CONDUCT.md, verbatim:\n\n" + conductText)
		}, Expect{
			Goal:          []string{"CONTRIBUTING.md"},
			Constraints:   []string{"British", "80 lines", "security@fernhill.dev | public issue"},
			Done:          []string{"CONTRIBUTING.md", "security@fernhill.dev & section | security section"},
			Entities:      []string{"CONTRIBUTING.md", "security@fernhill.dev", "make setup"},
			ReadFiles:     []string{"Makefile"},
			ModifiedFiles: []string{"CONTRIBUTING.md"},
		}),
		keeping(500, "split-turn-large-reads", "a turn too large to keep: a question answered, then a long investigation cut in the middle", func(s *Script) {
			s.User("What does the retry middleware in pkg/httpx do on a 503?")
			s.Do("", Read("pkg/httpx/retry.go", "// Retry retries idempotent requests on 502, 503 and 504 with exponential backoff\n// (100ms, 200ms, 400ms), at most 3 attempts, honouring Retry-After.\nfunc Retry(next http.RoundTripper) http.RoundTripper { /* ... */ }\n"))
			s.Say("On a 503 it retries idempotent requests (GET, HEAD, PUT, DELETE) up to 3 attempts with 100/200/400ms backoff, or waits for `Retry-After` when the server sends one. POSTs are not retried.")
			s.User("We see duplicate charges from the payments client even though it only does POSTs. Investigate pkg/payments and pkg/httpx together and tell me where a POST can be sent twice. Don't change any code yet, just find it.")
			s.Do("Reading the payments client and how it builds its transport.", Read("pkg/payments/client.go", "package payments\n\n// Client talks to the PSP.\ntype Client struct {\n\thc *http.Client\n}\n\nfunc New(base string) *Client {\n\treturn &Client{hc: &http.Client{Transport: httpx.Retry(httpx.Timeout(http.DefaultTransport, 10*time.Second))}}\n}\n\nfunc (c *Client) Charge(ctx context.Context, req ChargeRequest) (*Charge, error) {\n\tbody, _ := json.Marshal(req)\n\tr, _ := http.NewRequestWithContext(ctx, \"POST\", c.base+\"/charges\", bytes.NewReader(body))\n\tr.Header.Set(\"Idempotency-Key\", req.ID)\n\treturn c.do(r)\n}\n"+stringsRepeat("// request helpers and response decoding\n", 70)),
				Read("pkg/httpx/retry.go", "package httpx\n\nvar idempotent = map[string]bool{\"GET\": true, \"HEAD\": true, \"PUT\": true, \"DELETE\": true}\n\nfunc Retry(next http.RoundTripper) http.RoundTripper {\n\treturn rtFunc(func(r *http.Request) (*http.Response, error) {\n\t\tfor attempt := 1; ; attempt++ {\n\t\t\tresp, err := next.RoundTrip(r)\n\t\t\tif err != nil && attempt < 3 {\n\t\t\t\tcontinue // network errors are retried for every method\n\t\t\t}\n\t\t\tif resp != nil && retryable(resp.StatusCode) && idempotent[r.Method] && attempt < 3 {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\treturn resp, err\n\t\t}\n\t})\n}\n"+stringsRepeat("// backoff and Retry-After parsing\n", 70)))
			s.Do("Found a candidate: Retry retries network errors for every method, POST included (`if err != nil && attempt < 3 { continue }` has no idempotent check). With httpx.Timeout inside it, a charge that times out after 10s on the client side but succeeded at the PSP is sent again. The Idempotency-Key header should protect against that; checking whether the PSP honours it.", Sh("rg -n \"Idempotency-Key\" docs/psp-api.md pkg/", "pkg/payments/client.go:17:\tr.Header.Set(\"Idempotency-Key\", req.ID)\ndocs/psp-api.md:212:Idempotency keys are honoured for 24 hours and must be unique per merchant account."))
			s.Do("The key is set to req.ID. Checking where ChargeRequest.ID comes from.", Sh("rg -n \"ChargeRequest\\{\" --type go", "pkg/checkout/pay.go:41:\treq := payments.ChargeRequest{ID: uuid.NewString(), Amount: cart.Total(), Currency: cart.Currency}"),
				Read("pkg/checkout/pay.go", "func (s *Service) Pay(ctx context.Context, cart *Cart) error {\n\tfor i := 0; i < 2; i++ {\n\t\treq := payments.ChargeRequest{ID: uuid.NewString(), Amount: cart.Total(), Currency: cart.Currency}\n\t\tif _, err := s.payments.Charge(ctx, req); err == nil {\n\t\t\treturn nil\n\t\t}\n\t}\n\treturn ErrPaymentFailed\n}\n"+stringsRepeat("// order state transitions\n", 60)))
			s.Do("There it is: Service.Pay in pkg/checkout/pay.go loops twice and builds a new ChargeRequest with a fresh uuid.NewString() on each attempt, so the second attempt has a new Idempotency-Key and the PSP treats it as a new charge. Combined with httpx.Retry retrying POSTs on network errors, one Pay can charge up to 6 times. Checking the logs for a duplicate pair to confirm.", Sh("zgrep -h 'charge created' /var/log/checkout/app.log.1.gz | awk '{print $5, $7}' | sort | uniq -d -w 12 | head -3", "cart=8812731 key=3f0e6a1c-5b1d-4c55-9a0e-2b7f1d9e8c41\ncart=8812731 key=a9d4b2e7-0c3f-4e61-8f2a-6c5d7e8f9a01"))
		}, Expect{
			Goal:        []string{"retry | 503"},
			Latest:      "duplicate charges | post can be sent twice | sent twice",
			Constraints: []string{"don't change any code | no code changes | not change any code"},
			Done:        []string{"503 | retries idempotent"},
			InProgress:  []string{"duplicate"},
			Next:        []string{"pay.go | idempotency | log | confirm | duplicate"},
			Entities:    []string{"pkg/payments/client.go", "pkg/httpx/retry.go", "pkg/checkout/pay.go", "Idempotency-Key", "uuid.NewString()"},
			ReadFiles:   []string{"pkg/checkout/pay.go", "pkg/httpx/retry.go", "pkg/payments/client.go"},
		}),
		lastTurn("user-interrupt-redirect", "the user interrupts a long command and redirects the work", func(s *Script) {
			s.User("Find why the importer is slow on big CSV files (cmd/importer). Profile it on testdata/big.csv.")
			s.Do("Profiling a full run.", Sh("go build -o /tmp/importer ./cmd/importer && /tmp/importer -cpuprofile /tmp/cpu.out testdata/big.csv", "imported 1,000,000 rows in 48.2s"),
				Sh("go tool pprof -top -nodecount=5 /tmp/importer /tmp/cpu.out", "      flat  flat%   sum%        cum   cum%\n    21.40s 44.40% 44.40%     21.40s 44.40%  regexp.(*Regexp).doExecute\n     9.10s 18.88% 63.28%     30.90s 64.11%  github.com/acme/importer/parse.normalizePhone\n     4.20s  8.71% 71.99%      4.20s  8.71%  runtime.mallocgc\n     2.90s  6.02% 78.01%      2.90s  6.02%  strings.(*Builder).grow\n     1.80s  3.73% 81.74%      1.80s  3.73%  encoding/csv.(*Reader).readRecord"))
			s.Say("64% of the CPU time is in `parse.normalizePhone`, nearly all of it in `regexp` (44%): it compiles or runs a regular expression per row. Next I'd profile allocations and then rewrite `normalizePhone` without the regexp.")
			s.User("ok")
			s.Abort("Profiling allocations on the full file.", Sh("/tmp/importer -memprofile /tmp/mem.out testdata/big.csv", ""))
			s.User("Stop, that takes a minute. Skip the allocation profile, just rewrite normalizePhone without regexp and benchmark it on the unit level. Keep the exact same output for every input in parse/testdata/phones.txt.")
			s.Do("", Read("parse/phone.go", "func normalizePhone(s string) string {\n\tre := regexp.MustCompile(`[^0-9+]`)\n\ts = re.ReplaceAllString(s, \"\")\n\tif strings.HasPrefix(s, \"00\") {\n\t\ts = \"+\" + s[2:]\n\t}\n\treturn s\n}\n"))
			s.Do("The regexp is compiled on every call. Rewriting as a byte loop.", Edit("parse/phone.go", "\tre := regexp.MustCompile(`[^0-9+]`)\n\ts = re.ReplaceAllString(s, \"\")", "\tb := make([]byte, 0, len(s))\n\tfor i := 0; i < len(s); i++ {\n\t\tif c := s[i]; c == '+' || (c >= '0' && c <= '9') {\n\t\t\tb = append(b, c)\n\t\t}\n\t}\n\ts = string(b)"))
			s.Do("", Sh("go test ./parse/ -run TestNormalizePhoneGolden -bench NormalizePhone -benchmem", "goos: linux\nBenchmarkNormalizePhone-8   \t24318826\t        49.1 ns/op\t      16 B/op\t       1 allocs/op\nPASS\nok  \tgithub.com/acme/importer/parse\t1.62s"))
			s.Say("`normalizePhone` in `parse/phone.go` is now a byte loop: 49.1 ns/op and 1 allocation, and `TestNormalizePhoneGolden` (every input of `parse/testdata/phones.txt`) passes with identical output. I have not re-run the full import.")
			s.User("Here is the full run with the new normalizePhone, from the staging box:\n\n```\n" + importerRun + "```\n\nWhat is the next hot spot?")
		}, Expect{
			Goal:          []string{"importer & slow"},
			Latest:        "normalizephone & regexp | without regexp",
			Constraints:   []string{"phones.txt | same output", "allocation profile | skip"},
			Done:          []string{"byte loop | without regexp | without the regexp", "49.1 ns | testnormalizephonegolden & pass"},
			Next:          []string{"full import | re-run | importer"},
			Entities:      []string{"parse/phone.go", "parse.normalizePhone", "parse/testdata/phones.txt", "TestNormalizePhoneGolden", "testdata/big.csv"},
			ModifiedFiles: []string{"parse/phone.go"},
		}),
	}
}
