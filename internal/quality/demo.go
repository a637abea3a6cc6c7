package quality

import _ "embed"

// demoFile is the example session `make demo` compacts (cmd/pi-lsp/example), in the case
// files' format: a session in the shape real ones have, written here: a request wrapped
// in harness text, a todo list kept by a todo extension, multi-line shell with set-up
// lines, an assignment from $(…) and a here-document, a harness notice in a tool's
// output, a failing test fixed by the next change, an assistant report with a heading, a
// table and bold lead-ins, then two more requests (a pull request, a lint failure from CI).
//
//go:embed demo-session.txt
var demoFile []byte

// DemoSession is the example session's file. `go run ./tools/quality -demo FILE` writes
// it; a test keeps the shipped file current.
func DemoSession() []byte {
	b, err := ParseSession("demo-session.txt", demoFile)
	if err != nil {
		panic(err) // embedded: TestDemoSessionIsCurrent reads it
	}
	return b
}
