package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The writing commands are the session service's jobs (internal/service): it decides
// where a write goes (into the file, to a live pi through pi-lsp's bridge, which then
// writes its own session with its model and settings, or refused), as it does for the
// server; a command only converts its flags and renders the outcome.

// svc is the session service with the command's own choices.
func svc(summarizer string, keepRecent, reserve int) service.Config {
	agent, _ := session.AgentDir()
	c := service.Config{AgentDir: agent, KeepRecentTokens: keepRecent, ReserveTokens: reserve}
	c.SummarizerConfig.Kind = summarizer
	return c
}

// forceHint says how to force a write a running pi refused.
func forceHint(err error) error {
	var ref *service.Refusal
	if errors.As(err, &ref) {
		return fmt.Errorf("%w (--force)", err)
	}
	return err
}

// setFlags lists which of names were given on the command line.
func setFlags(fs *flag.FlagSet, names ...string) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(names, f.Name) {
			out = append(out, "--"+f.Name)
		}
	})
	return out
}
