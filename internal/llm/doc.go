// Package llm is Pi's model APIs and nothing else: a Request (a system prompt, one user
// text, a thinking level, an output limit) sent to a model of Pi's catalog with its
// resolved credential over the model's API (anthropic-messages, openai-responses,
// openai-completions, google-generative-ai; one dispatch table, apis), and a Result (the
// answer's text, its usage in pi-ai's shape with its cost, the model).
//
// Files are named for what they do: llm.go (the request, the client, the dispatch
// table), one file per API with its body builder and stream reader (anthropic.go,
// responses.go, completions.go, google.go), tokens.go (output limits, thinking levels and
// budgets, sampling parameters as pi-ai derives them), http.go (the one HTTP policy of
// every call), stream.go (what every stream reader shares: the answer's size bound, the
// classification of a broken stream), retry.go (attempts, backoff, stalls, the total
// bound), errors.go (the failure taxonomy and redaction), cost.go (usage and pi-ai's
// calculateCost).
//
// Invariants:
//   - a request body is what Pi 1.6.0 (pi-ai) sends for the same model and request,
//     field by field (the model's compat, thinking level map and limits), checked by the
//     differential tests against real Pi of internal/compaction, internal/rpc and
//     cmd/pi-lsp;
//   - no credential appears in an error, a progress report or a log: provider error
//     texts are redacted of the key and the configured header values;
//   - no redirect is followed (refuseRedirect): the credential and the configured
//     headers reach only the host and port of the model's base URL;
//   - an answer is bounded by what the request asked for (answerSize): a stream that
//     goes on past it is cut, and memory stays bounded while it streams;
//   - nothing here knows of sessions or compaction: the caller builds the prompt.
//
// Dependencies: none beyond the standard library. Each API is one JSON POST and a stream
// of server-sent events (readSSE), and the body must be pi-ai's field by field, which the
// providers' typed parameters cannot all express: the official Anthropic SDK
// (anthropic-sdk-go) and OpenAI SDK (openai-go), and go-openai, were used only to send a
// body built here and to split the stream into events, while they brought their own
// retries, header sets and redirect-following client, a JSON-schema generator that links
// go/parser (invopop/jsonschema), OpenTelemetry and 17 indirect modules. Google's Go client
// (google.golang.org/genai) brings gRPC, protocol buffers and Google Cloud's auth
// libraries for the same one POST.
package llm
