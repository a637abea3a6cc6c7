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
package quality
