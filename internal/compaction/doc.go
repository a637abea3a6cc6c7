// Package compaction implements Pi 1.6.0's context compaction: cut points, preparation,
// the serialized conversation, the summary request, and the compaction entry, with
// summarizers behind one interface (an embedded extractive one and any
// OpenAI-compatible endpoint).
//
// Invariants: the algorithms return what Pi's own code returns for the same path (checked
// by differential tests), except for the deliberate divergences documented in the README;
// a compaction that fails or is cancelled writes nothing.
package compaction
