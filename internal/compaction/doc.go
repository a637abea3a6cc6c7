// Package compaction implements Pi 1.6.0's context compaction: cut points, preparation,
// the serialized conversation, the summary request's prompt, and the compaction entry,
// with summarizers behind one interface: an embedded extractive one and a model one
// (ModelSummarizer), which builds Pi's summarization prompt (SystemPrompt, BuildPrompt)
// and sends it through an llm.Client. Which summarizer and model a job uses is the
// service's choice (internal/service); this package chooses no model and reads no file
// except through a session.Snapshot (and its own drafts).
//
// Invariants: the algorithms return what Pi's own code returns for the same path (checked
// by differential tests), except for the deliberate divergences documented in the README;
// a compaction (Run) is computed on a session.Snapshot and written through it, only
// while the file is still the one the snapshot read; a compaction that fails or is
// cancelled writes nothing; no credential appears in an error, a progress report or a
// log.
package compaction
