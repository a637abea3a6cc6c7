package main

// The --json answers of the writing commands are typed in internal/rpc (cli_answers.go),
// beside the server's shapes, and documented in docs/protocol.md's CLI section.

// orNull is s, or null when s is "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
