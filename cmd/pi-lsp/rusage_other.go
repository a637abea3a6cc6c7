//go:build !unix

package main

// maxRSS is 0 where getrusage does not exist (Windows): bench-file reports no peak.
func maxRSS() int64 { return 0 }
