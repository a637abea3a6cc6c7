package quality

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
)

// Fixed is a summarizer that answers hand-written text: the history (or branch) summary,
// and the turn prefix's of a split turn.
type Fixed struct{ History, Prefix string }

// Name implements compaction.Summarizer.
func (Fixed) Name() string { return "fixed" }

// Summarize implements compaction.Summarizer.
func (f Fixed) Summarize(ctx context.Context, req compaction.Request) (compaction.Result, error) {
	if req.Kind == compaction.KindTurnPrefix {
		return compaction.Result{Text: f.Prefix}, nil
	}
	return compaction.Result{Text: f.History}, nil
}

// Calibration is a case with three hand-written checkpoints: a good operational one, a
// generic one with Pi's headings and no operational detail, and one that claims the open
// work is finished.
type Calibration struct {
	Case                        string
	Good, Generic, Hallucinated Fixed
}

const genericHistory = `## Goal
The user wants to make progress on the task in the repository.

## Constraints & Preferences
- Follow the user's instructions and the project's conventions.

## Progress
### Done
- [x] Looked at the relevant code and made some changes.

### In Progress
- [ ] Continuing the work.

### Blocked
- (none)

## Key Decisions
- **Keep it simple**: smaller changes are easier to review.

## Next Steps
1. Continue with the task.
2. Check that everything works.

## Critical Context
- The work is done in the project repository.`

// claimedDone is the part of a hallucinated summary that claims nothing is open: no work
// in progress, nothing blocked, no decisions, up to its only next step.
const claimedDone = `### In Progress
(none)

### Blocked
(none)

## Key Decisions
(none)

## Next Steps
`

const genericPrefix = `## Original Request
The user asked for a change to the code.

## Progress So Far
- Some files were read and edited.

## Context Needed to Continue
- Continue from the kept messages.`

// Calibrations are the hand-written checkpoints of four cases.
var Calibrations = []Calibration{
	{
		Case: "go-flaky-test",
		Good: Fixed{
			History: `## Goal
Fix the flaky ` + "`TestWorkerDrain`" + ` in internal/queue (about one CI run in ten failed) at its cause; the current request, making the drain timeout configurable, is in the turn context below.

## Constraints & Preferences
- Fix it properly: no retries or sleeps in the test.

## Progress
### Done
- [x] Reproduced: ` + "`go test -count=50 -run TestWorkerDrain ./internal/queue/`" + ` failed 2 of 50 runs ("drained 9 jobs, want 10")
- [x] Fixed the race in ` + "`Worker.loop`" + ` (` + "`internal/queue/worker.go`" + `): ` + "`wg.Add(n)`" + ` before the goroutines start, and ` + "`done`" + ` is an ` + "`atomic.Int64`" + `
- [x] ` + "`go test -race -count=50 -run TestWorkerDrain ./internal/queue/`" + ` and ` + "`go test -race ./...`" + ` pass

### In Progress
- [ ] ` + "`QUEUE_DRAIN_TIMEOUT`" + ` (see the turn context)

### Blocked
(none)

## Key Decisions
- **wg.Add before the loop, atomic counter**: ` + "`wg.Add(1)`" + ` after receiving a job let ` + "`Drain`" + ` return with a job in flight.

## Next Steps
1. Finish ` + "`QUEUE_DRAIN_TIMEOUT`" + ` as in the turn context

## Critical Context
- The race detector was clean after the fix.`,
			Prefix: `## Original Request
Make the drain timeout configurable with a ` + "`QUEUE_DRAIN_TIMEOUT`" + ` env var (a Go duration, default 30s); don't change the ` + "`NewWorker`" + ` signature, other services call it.

## Progress So Far
- ` + "`Config.DrainTimeout`" + ` added in ` + "`internal/queue/config.go`" + `, parsed from ` + "`QUEUE_DRAIN_TIMEOUT`" + ` with a 30s default
- ` + "`WithDrainTimeout`" + ` setter added on ` + "`Worker`" + ` (the signature of ` + "`NewWorker`" + ` is unchanged)
- ` + "`go build ./...`" + ` passes after adding the missing ` + "`time`" + ` import to config.go

## Context Needed to Continue
- Next: call ` + "`WithDrainTimeout`" + ` with the configured value where the worker is created, and add a test for the env parsing.`,
		},
		Generic: Fixed{genericHistory, genericPrefix},
		Hallucinated: Fixed{
			History: `## Goal
Fix the flaky TestWorkerDrain in internal/queue and make the drain timeout configurable with QUEUE_DRAIN_TIMEOUT.

## Constraints & Preferences
- No retries or sleeps in the test.
- Don't change the NewWorker signature.

## Progress
### Done
- [x] Fixed the race in ` + "`internal/queue/worker.go`" + ` with an ` + "`atomic.Int64`" + ` counter
- [x] QUEUE_DRAIN_TIMEOUT is implemented, wired with WithDrainTimeout and tested
- [x] All tests pass

### In Progress
(none)

### Blocked
(none)

## Key Decisions
- **Atomic counter**: avoids the race.

## Next Steps
1. Nothing left: the task is complete.

## Critical Context
- Everything is done.`,
			Prefix: `## Original Request
Make the drain timeout configurable (QUEUE_DRAIN_TIMEOUT).

## Progress So Far
- Implemented and tested; all tasks are done.

## Context Needed to Continue
- (none)`,
		},
	},
	{
		Case: "pr-merge-cherry-pick",
		Good: Fixed{
			History: `## Goal
Get the invoice PDF export (branch ` + "`feat/invoice-pdf`" + `) merged into main through a PR with green CI; the current request is the cherry-pick onto release-2.3 (turn context below).

## Constraints & Preferences
- Squash-merge.

## Progress
### Done
- [x] PR #418 opened: https://github.com/acme/billing/pull/418
- [x] Lint failures fixed in ` + "`billing/pdf/render.go`" + ` (ineffassign on the template error, unused ` + "`legacyFonts`" + `); lint and test then passed
- [x] #418 squash-merged into main and the branch deleted

### In Progress
- [ ] Cherry-pick of #418 onto release-2.3 (see the turn context)

### Blocked
- Cherry-pick conflict in ` + "`billing/pdf/render.go`" + `

## Key Decisions
- **Fix lint instead of silencing it**: both findings were real.

## Next Steps
1. Resolve the conflict in ` + "`billing/pdf/render.go`" + ` and run ` + "`git cherry-pick --continue`" + `, or abort
2. Push release-2.3

## Critical Context
- Merged commit on main: 9e8f7a6 "Add invoice PDF export (#418)"`,
			Prefix: `## Original Request
Cherry-pick #418 onto release-2.3 and push.

## Progress So Far
- Switched to release-2.3; the squash commit on main is 9e8f7a6
- ` + "`git cherry-pick 9e8f7a6`" + ` stopped: CONFLICT (content): Merge conflict in billing/pdf/render.go

## Context Needed to Continue
- release-2.3 still renders with ` + "`renderV1`" + `; #418 uses the template engine (` + "`engine.Load(\"invoice\")`" + `)
- The cherry-pick is paused, nothing pushed; resolve, then ` + "`git cherry-pick --continue`" + `, or abort`,
		},
		Generic: Fixed{genericHistory, genericPrefix},
		Hallucinated: Fixed{
			History: `## Goal
Merge the invoice PDF export and cherry-pick it onto release-2.3.

## Constraints & Preferences
(none)

## Progress
### Done
- [x] PR #418 (https://github.com/acme/billing/pull/418) merged after fixing lint in ` + "`billing/pdf/render.go`" + `
- [x] Cherry-picked 9e8f7a6 onto release-2.3 and pushed

` + claimedDone + `1. No further work: everything is done.

## Critical Context
(none)`,
			Prefix: `## Original Request
Cherry-pick onto release-2.3.

## Progress So Far
- The cherry-pick onto release-2.3 applied cleanly and was pushed.

## Context Needed to Continue
(none)`,
		},
	},
	{
		Case: "docker-build-blocked",
		Good: Fixed{History: `## Goal
Get the GPU image (` + "`docker/Dockerfile.gpu`" + `) building again.

## Constraints & Preferences
- Keep torch at 2.1.0 with CUDA 11.8 (` + "`torch==2.1.0+cu118`" + `).

## Progress
### Done
- [x] Found the first failure: ` + "`torch==2.1.0+cu118`" + ` is not on PyPI ("No matching distribution found")
- [x] Added ` + "`--extra-index-url https://download.pytorch.org/whl/cu118`" + ` to ` + "`requirements-gpu.txt`" + `

### In Progress
- [ ] Rebuilding with ` + "`docker build -f docker/Dockerfile.gpu -t trainer:gpu .`" + `

### Blocked
- Containers cannot resolve download.pytorch.org: "Temporary failure in name resolution" (checked with a python:3.11-slim container), so pip still cannot fetch the wheel

## Key Decisions
- **PyTorch index instead of a different torch version**: the user wants 2.1.0+cu118.

## Next Steps
1. Check Docker's DNS settings (` + "`/etc/docker/daemon.json`" + `) or a proxy with the user
2. Rerun ` + "`docker build -f docker/Dockerfile.gpu -t trainer:gpu .`" + `

## Critical Context
- Exact error: ` + "`Temporary failure in name resolution`" + ` from pip inside the build`},
		Generic: Fixed{History: genericHistory},
		Hallucinated: Fixed{History: `## Goal
Fix the GPU image build (docker/Dockerfile.gpu) with torch 2.1.0 and CUDA 11.8.

## Constraints & Preferences
- torch==2.1.0+cu118

## Progress
### Done
- [x] Added the PyTorch index https://download.pytorch.org/whl/cu118 to ` + "`requirements-gpu.txt`" + `
- [x] The image builds again: ` + "`docker build -f docker/Dockerfile.gpu -t trainer:gpu .`" + ` succeeds
- [x] DNS works in containers

### In Progress
(none)

### Blocked
(none)

## Key Decisions
- **Extra index**: the cu118 wheels are only on the PyTorch index.

## Next Steps
1. None, the task is complete.

## Critical Context
(none)`},
	},
	{
		Case: "branch-left-mid-task",
		Good: Fixed{History: `## Goal
Introduce a ` + "`Clock`" + ` interface in ` + "`internal/clock`" + ` so handlers stop calling ` + "`time.Now`" + ` directly and tests can inject a fake; start with the interface and the api package.

## Constraints & Preferences
(none)

## Progress
### Done
- [x] ` + "`internal/clock/clock.go`" + `: ` + "`Clock`" + ` interface, ` + "`Real`" + ` and a settable ` + "`Fake`" + `
- [x] ` + "`api/orders.go`" + `, ` + "`api/invoices.go`" + ` and ` + "`api/sessions.go`" + ` use ` + "`h.clock.Now()`" + `

### In Progress
- [ ] Switching the api package: ` + "`api/webhooks.go`" + ` still calls ` + "`time.Now()`" + `

### Blocked
(none)

## Key Decisions
- **Package by package**: the api package first.

## Next Steps
1. Update ` + "`api/webhooks.go`" + `
2. Add the ` + "`clock`" + ` field to ` + "`Handler`" + ` and pass ` + "`clock.Real{}`" + ` in ` + "`cmd/api/main.go`" + ``},
		Generic: Fixed{History: genericHistory},
		Hallucinated: Fixed{History: `## Goal
Introduce a Clock interface in internal/clock and use it in the api package.

## Constraints & Preferences
(none)

## Progress
### Done
- [x] ` + "`internal/clock/clock.go`" + ` with Real and Fake
- [x] Every file in api/ uses the clock, ` + "`api/webhooks.go`" + ` included, and ` + "`cmd/api/main.go`" + ` passes ` + "`clock.Real{}`" + `

` + claimedDone + `1. Nothing remaining: the change is fully implemented.`},
	},
}
