// Package testsupport holds the helpers that tests of several packages share, one
// package each, so that no package copies another's harness:
//
//   - lsptest: the LSP harness (a server in process over a pipe, or the built binary
//     over stdio) with an independent client and composable Await expectations;
//   - fakemodel: one scripted OpenAI-compatible streaming server;
//   - modelapi: a capture server of every summary API (anthropic-messages,
//     openai-responses, openai-completions, google-generative-ai), for comparing the
//     requests of real Pi and pi-lsp;
//   - isolate: temp HOME, XDG and Pi agent dirs for a test and the processes it starts;
//   - pirpc: one `pi --mode rpc` process, its JSON lines awaited as they come;
//   - corpus: the session corpus under testdata/corpus, copied where a test may write;
//   - sessiontest: a session file read, loaded and indexed, or the test fails;
//   - heap: the peak growth of the Go heap while a test runs one operation;
//   - linepeer: the far end of a JSON-lines socket, as a fake pi serves the bridge;
//   - feed: what a test reads from a process or connection, awaited item by item;
//   - watchdog: a call a test fears may hang, bounded in time;
//   - testfile: a file a test reads, written where the test may write, or it fails.
//
// The Pi oracle (real Pi through Node) is internal/oracle. Only _test.go files import
// these packages; production code never does.
package testsupport
