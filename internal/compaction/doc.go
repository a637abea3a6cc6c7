// Package compaction implements Pi 1.6.0's context compaction: cut points, preparation,
// the serialized conversation, the summary request, and the compaction entry, with
// summarizers behind one interface: an embedded extractive one, the model of Pi's catalog
// the session runs on (ModelSummarizer; chosen by SummarizerConfig.BuildFor), and any
// OpenAI-compatible endpoint.
//
// The model summarizer speaks anthropic-messages, openai-responses, openai-completions
// and google-generative-ai, each request's body built here as pi-ai 1.6.0 builds it for
// the model (its compat, thinking level map and limits) and compared with real Pi's by
// differential tests. The official SDKs send the Anthropic (anthropic-sdk-go) and OpenAI
// Responses (openai-go) requests and decode their streams, and go-openai the Chat
// Completions ones, each with the body built here as its request body: pi-ai's body follows
// the model's compat field by field (thinking display, effort messages, fallbacks and betas;
// the instruction role and the "off" effort; thinking formats, max_tokens for some hosts,
// routing preferences), which the SDKs' typed parameters cannot all express or would
// fill in otherwise. The Google request is sent and its stream parsed here: Google's Go
// client (google.golang.org/genai) brings gRPC, protocol buffers and Google Cloud's auth
// libraries for one JSON POST.
//
// Invariants: the algorithms return what Pi's own code returns for the same path (checked
// by differential tests), except for the deliberate divergences documented in the README;
// a compaction (Run) is computed on a session.Snapshot and written through it, only
// while the file is still the one the snapshot read; a compaction that fails or is
// cancelled writes nothing; no credential appears in an
// error, a progress report or a log.
package compaction
