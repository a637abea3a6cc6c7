package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
)

func runServe(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	fs.Bool("stdio", true, "serve on stdin/stdout (the default; vscode-languageclient adds it)")
	level := fs.String("log-level", "info", "stderr log level: debug, info, warn, error")
	for i, a := range args {
		// Clients pass extra flags such as --clientProcessId; ignore what we do not know.
		if strings.HasPrefix(a, "--clientProcessId") {
			args = append(args[:i:i], args[i+1:]...)
			break
		}
	}
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(*level))
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	logger.Info("pi-lsp serving on stdio", "version", Version, "pid", os.Getpid())
	code := rpc.Serve(ctx, os.Stdin, stdout, os.Stdin, rpc.Options{Version: Version, Logger: logger, DraftDir: compaction.DefaultDraftDir()})
	if code != 0 {
		return exitError{code}
	}
	return nil
}

func runCommands(_ context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	markdown := fs.Bool("markdown", false, "print the commands section of docs/protocol.md")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *markdown {
		_, err := io.WriteString(stdout, rpc.CommandsMarkdown())
		return err
	}
	type row struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		Title  string `json:"title"`
		Neovim string `json:"neovim"`
		Long   bool   `json:"long"`
	}
	var rows []row
	for _, c := range rpc.Commands() {
		rows = append(rows, row{c.ID, c.Method, c.Title, c.Neovim, c.Long})
	}
	if *asJSON {
		return writeJSON(stdout, rows)
	}
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-20s %-20s :%-18s %s\n", r.ID, r.Method, r.Neovim, r.Title)
	}
	return nil
}
