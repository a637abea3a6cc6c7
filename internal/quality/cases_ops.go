package quality

// Operations sessions: deployments, pull requests, CI, infrastructure; outcomes live in
// command output (the pod that came up, the PR merged, the plan's counts).

func opsCases() []*Case {
	return []*Case{
		lastTurn("k8s-staging-crashloop", "a staging deployment in CrashLoopBackOff until a secret is wired; the pod comes up", func(s *Script) {
			s.User("Deploy the new api image (registry.acme.io/api:1.14.0) to staging and make sure it comes up. Only the staging namespace, never touch prod.")
			s.Do("Updating the image in the staging manifest and applying it.", Edit("k8s/staging/api.yaml", "image: registry.acme.io/api:1.13.2", "image: registry.acme.io/api:1.14.0"),
				Sh("kubectl -n staging apply -f k8s/staging/api.yaml", "deployment.apps/api configured\nservice/api unchanged"))
			s.Do("Watching the rollout.", ShFail("kubectl -n staging rollout status deploy/api --timeout=120s", "Waiting for deployment \"api\" rollout to finish: 1 old replicas are pending termination...\nerror: deployment \"api\" exceeded its progress deadline", 1))
			s.Do("", Sh("kubectl -n staging get pods -l app=api", "NAME                   READY   STATUS             RESTARTS      AGE\napi-7d9f8b6c5-x2k4q    0/1     CrashLoopBackOff   4 (31s ago)   2m10s\napi-5c8d7f9b4-mm2tz    1/1     Running            0             3d"))
			s.Do("", Sh("kubectl -n staging logs api-7d9f8b6c5-x2k4q --previous", "{\"level\":\"fatal\",\"msg\":\"config: missing required env PAYMENTS_WEBHOOK_SECRET\",\"version\":\"1.14.0\"}"))
			s.Do("1.14.0 needs PAYMENTS_WEBHOOK_SECRET, which the staging deployment does not set. The secret exists in the namespace?", Sh("kubectl -n staging get secret payments -o jsonpath='{.data}' | jq 'keys'", "[\n  \"PAYMENTS_API_KEY\",\n  \"PAYMENTS_WEBHOOK_SECRET\"\n]"))
			s.Do("It does. Adding the env var from the secret.", Edit("k8s/staging/api.yaml", "        - name: PAYMENTS_API_KEY\n          valueFrom:\n            secretKeyRef: {name: payments, key: PAYMENTS_API_KEY}", "        - name: PAYMENTS_API_KEY\n          valueFrom:\n            secretKeyRef: {name: payments, key: PAYMENTS_API_KEY}\n        - name: PAYMENTS_WEBHOOK_SECRET\n          valueFrom:\n            secretKeyRef: {name: payments, key: PAYMENTS_WEBHOOK_SECRET}"),
				Sh("kubectl -n staging apply -f k8s/staging/api.yaml", "deployment.apps/api configured"))
			s.Do("", Sh("kubectl -n staging rollout status deploy/api --timeout=120s", "Waiting for deployment \"api\" rollout to finish: 1 of 2 updated replicas are available...\ndeployment \"api\" successfully rolled out"))
			s.Do("", Sh("kubectl -n staging get pods -l app=api", "NAME                   READY   STATUS    RESTARTS   AGE\napi-6f7c9d8b5-q4zlm    1/1     Running   0          41s\napi-6f7c9d8b5-r8n2w    1/1     Running   0          29s"))
			s.Say("api 1.14.0 is running in staging: pods `api-6f7c9d8b5-q4zlm` and `api-6f7c9d8b5-r8n2w` are 1/1 Running. The first rollout crash-looped on `missing required env PAYMENTS_WEBHOOK_SECRET`; `k8s/staging/api.yaml` now takes it from the `payments` secret. Prod was not touched; its manifest will need the same env var before 1.14.0 goes there.")
			s.User("Here is the prod manifest diff I plan to apply tomorrow, does it look right?\n\n```diff\n" + prodDiff + "```")
		}, Expect{
			Goal:          []string{"registry.acme.io/api:1.14.0 | 1.14.0 & staging"},
			Constraints:   []string{"staging & prod"},
			Done:          []string{"1/1 running | running | successfully rolled out", "PAYMENTS_WEBHOOK_SECRET & secret | payments"},
			Next:          []string{"prod & manifest | PAYMENTS_WEBHOOK_SECRET"},
			Stale:         []string{"crashloopbackoff | progress deadline | missing required env"},
			Entities:      []string{"api-6f7c9d8b5-q4zlm", "PAYMENTS_WEBHOOK_SECRET", "k8s/staging/api.yaml", "registry.acme.io/api:1.14.0"},
			ModifiedFiles: []string{"k8s/staging/api.yaml"},
		}),
		keeping(90, "pr-merge-cherry-pick", "a pull request through CI to a merge, then a cherry-pick stopped by a conflict", func(s *Script) {
			s.User("The invoice PDF export is done on my branch feat/invoice-pdf. Open a PR against main, get CI green, and squash-merge it.")
			s.Do("", Sh("git push -u origin feat/invoice-pdf", "To github.com:acme/billing.git\n * [new branch]      feat/invoice-pdf -> feat/invoice-pdf\nbranch 'feat/invoice-pdf' set up to track 'origin/feat/invoice-pdf'."),
				Sh("gh pr create --base main --title \"Add invoice PDF export\" --body \"Renders invoices to PDF with the new template engine.\"", "https://github.com/acme/billing/pull/418"))
			s.Do("PR #418 is open. Waiting for CI.", ShFail("gh pr checks 418 --watch", "lint\tfail\t1m02s\thttps://github.com/acme/billing/actions/runs/9876543210/job/27182818\ntest\tpass\t3m41s\thttps://github.com/acme/billing/actions/runs/9876543210/job/27182819", 1))
			s.Do("", Sh("gh run view 9876543210 --log-failed | tail -5", "lint\tgolangci-lint\tbilling/pdf/render.go:88:2: ineffectual assignment to err (ineffassign)\nlint\tgolangci-lint\tbilling/pdf/render.go:131:6: func `legacyFonts` is unused (unused)"))
			s.Do("Two lint findings in billing/pdf/render.go: an ignored error and an unused func.",
				Edit("billing/pdf/render.go", "	buf, err = tmpl.Execute(data)\n	buf, err = addFooter(buf)", "	buf, err = tmpl.Execute(data)\n	if err != nil {\n		return nil, fmt.Errorf(\"render invoice %s: %w\", inv.ID, err)\n	}\n	buf, err = addFooter(buf)"),
				Edit("billing/pdf/render.go", "func legacyFonts() []string {\n\treturn []string{\"Helvetica\", \"Times\"}\n}\n", ""),
				Sh("git commit -am \"fix(pdf): handle template error, drop unused legacyFonts\" && git push", "[feat/invoice-pdf 4c1d2e9] fix(pdf): handle template error, drop unused legacyFonts\n 1 file changed, 3 insertions(+), 4 deletions(-)"))
			s.Do("", Sh("gh pr checks 418 --watch", "lint\tpass\t58s\thttps://github.com/acme/billing/actions/runs/9876549999/job/27183001\ntest\tpass\t3m38s\thttps://github.com/acme/billing/actions/runs/9876549999/job/27183002"))
			s.Do("CI is green. Merging.", Sh("gh pr merge 418 --squash --delete-branch", "✓ Squashed and merged pull request acme/billing#418 (Add invoice PDF export)\n✓ Deleted local branch feat/invoice-pdf and switched to branch main\n✓ Deleted remote branch feat/invoice-pdf"))
			s.Say("PR #418 (https://github.com/acme/billing/pull/418) is squash-merged into main. CI first failed on two golangci-lint findings in `billing/pdf/render.go` (ineffassign, unused `legacyFonts`); both are fixed in 4c1d2e9 and lint and test passed.")
			s.User("Now cherry-pick it onto release-2.3 and push.")
			s.Do("", Sh("git fetch origin && git switch release-2.3 && git log --oneline -1 origin/main", "Switched to branch 'release-2.3'\nYour branch is up to date with 'origin/release-2.3'.\n9e8f7a6 Add invoice PDF export (#418)"))
			s.Do("", ShFail("git cherry-pick 9e8f7a6", "Auto-merging billing/pdf/render.go\nCONFLICT (content): Merge conflict in billing/pdf/render.go\nerror: could not apply 9e8f7a6... Add invoice PDF export (#418)\nhint: After resolving the conflicts, mark them with \"git add <paths>\"\nhint: and run \"git cherry-pick --continue\".", 1))
			s.Do("", Sh("git diff --name-only --diff-filter=U && git diff billing/pdf/render.go | head -20", "billing/pdf/render.go\n<<<<<<< HEAD\nfunc render(inv *Invoice) ([]byte, error) {\n\treturn renderV1(inv)\n=======\nfunc render(inv *Invoice) ([]byte, error) {\n\ttmpl, err := engine.Load(\"invoice\")\n>>>>>>> 9e8f7a6 (Add invoice PDF export (#418))"))
			s.Say("The cherry-pick of 9e8f7a6 onto release-2.3 stops on a conflict in `billing/pdf/render.go`: release-2.3 still renders with `renderV1`, and #418 replaces that with the template engine, which release-2.3 does not have. The cherry-pick is paused (not pushed). Options: resolve by taking #418's version and also cherry-picking the engine change, or abort with `git cherry-pick --abort`. Which do you want?")
		}, Expect{
			Goal:          []string{"feat/invoice-pdf | pr | invoice pdf"},
			Latest:        "release-2.3 & cherry-pick | cherry pick",
			Done:          []string{"#418 & merged", "legacyFonts | ineffassign"},
			InProgress:    []string{"cherry-pick | cherry pick | release-2.3"},
			Blocked:       []string{"conflict & render.go | conflict"},
			Next:          []string{"resolv | cherry-pick --continue | abort"},
			Stale:         []string{"ineffassign | lint & fail"},
			Entities:      []string{"https://github.com/acme/billing/pull/418", "#418", "billing/pdf/render.go", "9e8f7a6", "release-2.3"},
			ModifiedFiles: []string{"billing/pdf/render.go"},
		}),
		lastTurn("ci-oom-runner", "a CI job killed by the OOM killer, fixed within the user's cost constraint", func(s *Script) {
			s.User("The integration job in CI has been red since yesterday, see run 11223344556. Figure out what's wrong.")
			s.Do("", Sh("gh run view 11223344556 --log-failed | tail -8", "integration\tRun make integration\tok   github.com/acme/search/index\t41.2s\nintegration\tRun make integration\tsignal: killed\nintegration\tRun make integration\tFAIL\tgithub.com/acme/search/query\t88.731s\nintegration\tRun make integration\tmake: *** [Makefile:31: integration] Error 1\nintegration\tRun make integration\t##[error]Process completed with exit code 2."))
			s.Do("`signal: killed` while testing github.com/acme/search/query: the runner is out of memory. Checking what changed and the runner size.", Sh("git log --oneline --since=2.days -- query/ .github/workflows/ci.yml", "b7e2c19 query: load the full synonym table in TestMain\n31f00ad ci: run integration with -p 8"), Read(".github/workflows/ci.yml", "  integration:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-go@v5\n      - run: make integration GOFLAGS=\"-p 8\"\n"))
			s.Say("Two changes since the last green run: b7e2c19 loads the full synonym table (about 1.5 GB) in `TestMain` of the query package, and 31f00ad runs the packages with `-p 8`, so several test binaries hold that table at once on a 7 GB `ubuntu-latest` runner. A larger runner would fix it, or fewer parallel packages.")
			s.User("Don't bump the runner size, we pay per minute for large runners. Fix it within ubuntu-latest.")
			s.Do("Then fewer packages in parallel for the integration job: -p 2 keeps the index and query packages from overlapping.", Edit(".github/workflows/ci.yml", "      - run: make integration GOFLAGS=\"-p 8\"", "      # -p 2: the query tests load a 1.5 GB synonym table; 8 in parallel exhaust the 7 GB runner.\n      - run: make integration GOFLAGS=\"-p 2\""))
			s.Do("", Sh("git commit -am \"ci: run integration with -p 2 to stay within runner memory\" && git push && gh workflow run ci.yml --ref main", "[main 6d3a0b8] ci: run integration with -p 2 to stay within runner memory\n 1 file changed, 2 insertions(+), 1 deletion(-)\n✓ Created workflow_dispatch event for ci.yml at main"))
			s.Do("", Sh("gh run watch --exit-status $(gh run list -w ci.yml -L1 --json databaseId -q '.[0].databaseId')", "✓ main CI · 11223399001\nTriggered via workflow_dispatch about 9 minutes ago\n\nJOBS\n✓ lint in 51s\n✓ unit in 2m12s\n✓ integration in 6m48s"))
			s.Say("Integration is green again in run 11223399001 (6m48s, on `ubuntu-latest`). The job was OOM-killed (`signal: killed` in the query package) after b7e2c19 made each test binary load a 1.5 GB synonym table and 31f00ad ran 8 packages in parallel; `.github/workflows/ci.yml` now runs it with `-p 2` (commit 6d3a0b8).")
			s.User("Now the unit job is slow instead, it went from 2 to 6 minutes. Here are the slowest tests from the last run:\n\n```\n" + slowTests + "```")
		}, Expect{
			Goal:          []string{"integration & ci | 11223344556"},
			Constraints:   []string{"runner size | large runners | ubuntu-latest"},
			Done:          []string{"-p 2", "11223399001 | green | integration & 6m48s"},
			Stale:         []string{"signal: killed | exit code 2 | oom"},
			Entities:      []string{".github/workflows/ci.yml", "11223399001", "signal: killed", "b7e2c19", "6d3a0b8"},
			ModifiedFiles: []string{".github/workflows/ci.yml"},
		}),
		lastTurn("terraform-awaiting-approval", "an infrastructure change planned and waiting for the user's approval to apply", func(s *Script) {
			s.User("Increase the RDS instance for orders-db from db.t3.medium to db.r6g.large in infra/prod/rds.tf. Never run terraform apply without showing me the plan first.")
			s.Do("", Read("infra/prod/rds.tf", "resource \"aws_db_instance\" \"orders\" {\n  identifier     = \"orders-db\"\n  engine         = \"postgres\"\n  engine_version = \"15.5\"\n  instance_class = \"db.t3.medium\"\n  allocated_storage = 200\n  apply_immediately = true\n}\n"))
			s.Do("Changing the class. apply_immediately = true would restart the instance during business hours, so I'm setting it to false: the change then waits for the maintenance window.",
				Edit("infra/prod/rds.tf", "  instance_class = \"db.t3.medium\"", "  instance_class = \"db.r6g.large\""),
				Edit("infra/prod/rds.tf", "  apply_immediately = true", "  apply_immediately = false"))
			s.Do("", Sh("cd infra/prod && terraform plan -out=rds.tfplan", "  # aws_db_instance.orders will be updated in-place\n  ~ resource \"aws_db_instance\" \"orders\" {\n      ~ apply_immediately = true -> false\n        id                = \"db-7QXKJ2ZLMNB4\"\n      ~ instance_class    = \"db.t3.medium\" -> \"db.r6g.large\"\n        # (41 unchanged attributes hidden)\n    }\n\nPlan: 0 to add, 1 to change, 0 to destroy.\n\nSaved the plan to: rds.tfplan"))
			s.Say("The plan (saved as `infra/prod/rds.tfplan`) changes `aws_db_instance.orders` in place: `instance_class` db.t3.medium → db.r6g.large and `apply_immediately` true → false, so the resize happens in the next maintenance window instead of now. Plan: 0 to add, 1 to change, 0 to destroy. I have not applied it; shall I run `terraform apply rds.tfplan`?")
			s.User("Before we decide: here is the CPU of orders-db over the last week (hourly, percent). Is r6g.large enough?\n\n```\n" + cpuSeries + "```")
		}, Expect{
			Goal:          []string{"db.r6g.large | orders-db"},
			Constraints:   []string{"terraform apply & plan"},
			Done:          []string{"instance_class | db.r6g.large", "0 to add | 1 to change | rds.tfplan"},
			Blocked:       []string{"approval | approve | confirm | not applied | waiting"},
			Next:          []string{"terraform apply rds.tfplan | apply"},
			Entities:      []string{"infra/prod/rds.tf", "rds.tfplan", "db.r6g.large", "0 to add, 1 to change, 0 to destroy"},
			ModifiedFiles: []string{"infra/prod/rds.tf"},
		}),
		lastTurn("webhook-keyerror-friday", "a production error traced from logs and fixed; the deploy deferred by the user", func(s *Script) {
			s.User("We get 500s from the Stripe webhook since this morning. Logs are in /var/log/billing/app.log on this box. Find and fix it.")
			s.Do("", Sh("grep -n 'ERROR' /var/log/billing/app.log | tail -4", "88213:2026-11-06 09:14:02 ERROR handlers.webhook: unhandled exception\n88214:Traceback (most recent call last):\n88219:  File \"/srv/billing/handlers/webhook.py\", line 57, in handle_invoice_paid\n88220:KeyError: 'customer_id'"))
			s.Do("A KeyError on 'customer_id' in handle_invoice_paid. Reading the handler.", Read("handlers/webhook.py", "def handle_invoice_paid(event):\n    obj = event[\"data\"][\"object\"]\n    customer = obj[\"metadata\"][\"customer_id\"]\n    mark_paid(obj[\"id\"], customer)\n"))
			s.Do("Invoices created from the Stripe dashboard have no metadata.customer_id; the Stripe customer id is always in obj[\"customer\"]. I'll fall back to looking the customer up by Stripe id.",
				Edit("handlers/webhook.py", "    customer = obj[\"metadata\"][\"customer_id\"]", "    customer = obj.get(\"metadata\", {}).get(\"customer_id\") or customer_by_stripe_id(obj[\"customer\"])"),
				Edit("tests/test_webhook.py", "def test_invoice_paid():", "def test_invoice_paid_without_metadata(stripe_event):\n    event = stripe_event(\"invoice.paid\", metadata={})\n    handle_invoice_paid(event)\n    assert Invoice.get(event.data.object.id).paid\n\n\ndef test_invoice_paid():"))
			s.Do("", Sh("pytest tests/test_webhook.py -q", "....                                                                     [100%]\n4 passed in 0.61s"))
			s.Say("Fixed in `handlers/webhook.py`: `handle_invoice_paid` no longer assumes `metadata.customer_id` (dashboard-created invoices lack it) and falls back to the Stripe customer id; `test_invoice_paid_without_metadata` covers it, 4 passed. Shall I deploy it?")
			s.User("Not today, we don't deploy on Fridays. Leave it on the branch and we'll ship Monday.")
			s.Say("OK, it stays on the branch, not deployed; Monday's deploy will pick it up.")
			s.User("Unrelated: the nightly invoice job logged this last night, can you look at it next?\n\n```\n" + nightlyTrace + "```")
		}, Expect{
			Goal:          []string{"webhook & 500"},
			Constraints:   []string{"friday | monday"},
			Done:          []string{"customer_id & fall | no longer | .get", "4 passed"},
			Next:          []string{"deploy & monday"},
			Entities:      []string{"handlers/webhook.py", "KeyError: 'customer_id'", "handle_invoice_paid", "test_invoice_paid_without_metadata"},
			ModifiedFiles: []string{"handlers/webhook.py", "tests/test_webhook.py"},
		}),
		lastTurn("docker-build-blocked", "a Docker build that stays broken on a network error at the end of the span", func(s *Script) {
			s.User("The GPU image doesn't build anymore (docker/Dockerfile.gpu). Get it building again, keep torch at 2.1.0 with CUDA 11.8.")
			s.Do("", ShFail("docker build -f docker/Dockerfile.gpu -t trainer:gpu .", "#9 [5/7] RUN pip install -r requirements-gpu.txt\n#9 4.102 ERROR: Could not find a version that satisfies the requirement torch==2.1.0+cu118 (from versions: 2.2.0, 2.2.1, 2.3.0)\n#9 4.103 ERROR: No matching distribution found for torch==2.1.0+cu118\n#9 ERROR: process \"/bin/sh -c pip install -r requirements-gpu.txt\" did not complete successfully: exit code: 1", 1))
			s.Do("The +cu118 wheels are not on PyPI; they come from the PyTorch index. Adding it to the requirements file.", Read("requirements-gpu.txt", "torch==2.1.0+cu118\ntorchvision==0.16.0+cu118\nnumpy<2\n"),
				Edit("requirements-gpu.txt", "torch==2.1.0+cu118", "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.1.0+cu118"))
			s.Do("", ShFail("docker build -f docker/Dockerfile.gpu -t trainer:gpu .", "#9 [5/7] RUN pip install -r requirements-gpu.txt\n#9 2.311 WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError(\"Failed to establish a new connection: [Errno -3] Temporary failure in name resolution\")': /whl/cu118/torch/\n#9 21.47 ERROR: Could not find a version that satisfies the requirement torch==2.1.0+cu118\n#9 ERROR: process \"/bin/sh -c pip install -r requirements-gpu.txt\" did not complete successfully: exit code: 1", 1))
			s.Do("Now pip cannot resolve download.pytorch.org inside the build. Checking DNS from a container.", ShFail("docker run --rm python:3.11-slim python -c \"import socket; print(socket.gethostbyname('download.pytorch.org'))\"", "socket.gaierror: [Errno -3] Temporary failure in name resolution", 1))
			s.Say("The requirements now point pip at the PyTorch cu118 index (`requirements-gpu.txt`), which is where `torch==2.1.0+cu118` lives. The build still fails, now for a different reason: containers on this machine cannot resolve `download.pytorch.org` (`Temporary failure in name resolution`), so it is blocked on Docker's DNS here. Can you check the Docker daemon's DNS settings (`/etc/docker/daemon.json`) or tell me if a proxy is needed?")
			s.User("Here are the Docker daemon settings and resolv.conf of the build box:\n\n```\n" + daemonJSON + "```")
		}, Expect{
			Goal:          []string{"docker/Dockerfile.gpu | gpu image"},
			Constraints:   []string{"2.1.0 & 11.8 | cu118"},
			Done:          []string{"extra-index-url | download.pytorch.org/whl/cu118 | pytorch index"},
			Blocked:       []string{"name resolution | dns"},
			Next:          []string{"dns | daemon.json | proxy"},
			Entities:      []string{"docker/Dockerfile.gpu", "requirements-gpu.txt", "https://download.pytorch.org/whl/cu118", "Temporary failure in name resolution", "docker build -f docker/Dockerfile.gpu -t trainer:gpu ."},
			ModifiedFiles: []string{"requirements-gpu.txt"},
		}),
	}
}
