// Package quality is a benchmark of compaction checkpoints: sessions of realistic coding
// work, each annotated with what a checkpoint of its summarized part must carry (goal,
// latest request, constraints, done / in progress / blocked work, next actions, critical
// entities, the files read and modified), and a scorer of a summary against that
// annotation with the dimensions, weights and penalties of Pi's compaction rubric v0.3
// (docs/QUALITY.md says where they differ).
//
// Summaries are produced by the real code path (compaction.Prepare and
// compaction.Generate, or branch.Collect and branch.Generate), so the parts Pi adds
// around the summarizer's text are scored too.
//
// Invariant: scoring is deterministic. The same session, annotation and summary give the
// same score: no clock, randomness, map order or network takes part in it, and the
// sessions are written byte for byte the same every time.
//
// # Case files
//
// The cases are data: one text file a case under cases/ (embedded), grouped by what they
// exercise: coding (long tasks with failures and fixes, late constraints, sessions that
// end mid-task), ops (deployments, pull requests, CI, infrastructure, outcomes in command
// output), repeat (a second compaction that carries a previous summary forward), branch
// (a branch left by navigating the tree, summarized without its tool results) and
// held-out (written after the extractive summarizer was tuned; their mean is reported
// apart). The demo session of `make demo` (demo-session.txt) is in the same format. ParseCase
// reads a file into a Case whose Script replays the turns through the Script writer, so
// ids, timestamps and token figures come from the case's name alone.
//
// A file is a list of keyword lines, "keyword value": the value is the rest of the line
// after one space, or, when the keyword stands alone, the block of lines right under it
// that start with "| " (or are "|" alone, an empty line), joined by newlines: a block
// whose text ends with a newline ends with a "|" line. A value on the line that starts
// with a double quote is a Go string literal (for white space at an end, which editors
// drop: a line may not end in white space). Indentation, blank lines and # comments
// outside blocks are for the reader. A keyword missing a value means the empty string.
//
//	case go-flaky-test
//	title a flaky Go test fixed, then a new request cut mid-turn (split turn)
//	kind compaction
//	keep 60
//
//	user TestWorkerDrain in internal/queue is flaky on CI. Find out why and fix it.
//	do I'll reproduce it with many runs first.
//	  shfail go test -count=50 -run TestWorkerDrain ./internal/queue/
//	    exit 1
//	    out
//	    | --- FAIL: TestWorkerDrain (0.00s)
//	    | FAIL
//	say Fixed.
//
//	expect
//	  goal TestWorkerDrain & flaky
//	  stale drained 9 jobs | fail: testworkerdrain
//	  modified-file internal/queue/worker.go
//
// The header: case NAME (the file's base name), title, kind (compaction or branch), keep
// N (keepRecentTokens, 400 when absent) or keep last (only the last message is kept),
// target MARK (branch: the mark navigated to), held-out. A session file has session NAME
// and cwd DIR instead, and turns only.
//
// The turns, one directive each, in order (Script's method of the same name):
//
//	user TEXT, say TEXT, fail ERROR
//	do [TEXT] and abort [TEXT], each followed by its tool calls
//	shell COMMAND (a user's ! command) with exit N and out
//	note TYPE (an extension's message) with content
//	mark NAME, from MARK (the next entry starts a branch there)
//	compaction FIRST-KEPT-MARK and branch-summary FROM-MARK, with summary, read-file and
//	modified-file (repeated)
//
// The tool calls and their fields (the helpers Sh, ShFail, Read, ReadRange, ReadMissing,
// Edit, EditMiss, Write and Tool); any call may be pending (no result):
//
//	sh COMMAND: out (empty is "(no output)")
//	shfail COMMAND: exit N, out
//	read PATH: content, or offset N and limit N and content
//	read-missing PATH: abs
//	edit PATH and edit-miss PATH: old, new
//	write PATH: content
//	tool NAME: args (a JSON object, member order kept), result or error
//
// Last, expect and the annotation, a line a fact (Expect's fields): goal, latest,
// constraint, done, in-progress, blocked, next, stale, entity, noise, read-file and
// modified-file. A mistake is an error naming the file, the line and what is wrong.
// Generated text (long logs, repeated filler lines) is written out in full: the file
// holds what the session holds.
package quality
