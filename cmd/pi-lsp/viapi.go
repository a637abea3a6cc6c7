package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The writing commands ask the session service where a write goes, as the server does:
// into the file, to a live pi through pi-lsp's bridge (that pi then writes its own
// session with its model and settings, as the editors' commands do), or refused.

// svc is the session service with the command's own choices.
func svc(summarizer string, keepRecent, reserve int) service.Config {
	agent, _ := session.AgentDir()
	c := service.Config{AgentDir: agent, KeepRecentTokens: keepRecent, ReserveTokens: reserve}
	c.SummarizerConfig.Kind = summarizer
	return c
}

// route asks where a write to path goes; bridged says the command can hand it to a live
// pi. A refusal says how to force it.
func route(ctx context.Context, c service.Config, path, cwd string, force, bridged bool) (service.Route, error) {
	r, err := c.RouteWrite(ctx, path, cwd, force, bridged)
	var ref *service.Refusal
	if errors.As(err, &ref) {
		return r, fmt.Errorf("%w (--force)", err)
	}
	return r, err
}

// refuseOwned refuses to write a session a running pi process writes, for a command the
// bridge cannot do, unless forced.
func refuseOwned(path, cwd string, force bool) error {
	_, err := route(context.Background(), svc("", 0, 0), path, cwd, force, false)
	return err
}

// writerPi is the live pi a write to path goes to (nil: pi-lsp writes the file itself;
// a dry run writes nothing and goes nowhere). Pi's command takes none of the flags
// notPi names: a write given one of them is refused.
func writerPi(ctx context.Context, fs *flag.FlagSet, c service.Config, path, cwd string, force, dryRun bool, notPi ...string) (*bridge.Registration, error) {
	if dryRun {
		return nil, nil
	}
	r, err := route(ctx, c, path, cwd, force, true)
	if err != nil {
		return nil, err
	}
	if r.Bridge != nil {
		if given := setFlags(fs, notPi...); len(given) > 0 {
			return nil, notViaPi(r.Bridge, given)
		}
	}
	return r.Bridge, nil
}

// snapshotOf is a job's snapshot of the session at path, loaded once, and its index (nil
// with the error of a file that does not load: the run fails where it would read it).
func snapshotOf(path string) (*session.Snapshot, *session.Index, error) {
	snap, err := session.LoadSnapshot(path)
	if err != nil {
		return snap, nil, err
	}
	return snap, snap.Index(), nil
}

// notViaPi refuses a write that a live pi would have to do but cannot do as asked:
// pi compacts and summarizes with its own model and settings, at its own leaf.
func notViaPi(reg *bridge.Registration, flags []string) error {
	return fmt.Errorf("a live pi (pid %d) holds this session and does this write itself, with its own model and settings at its own leaf: %s cannot be honoured through it; drop it, close pi, or pass --force", reg.PID, strings.Join(flags, ", "))
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

// bridgeProgress reports pi's progress events as the command's progress lines.
func bridgeProgress(phase func(string)) func(bridge.Event) {
	return func(ev bridge.Event) {
		switch ev.Type {
		case "session_before_compact", "session_before_tree":
			phase("summarizing (pi's model)")
		}
	}
}

// compactViaPi makes the live pi compact its session.
func compactViaPi(ctx context.Context, reg *bridge.Registration, path, instructions string, asJSON bool, stdout io.Writer, phase func(string)) error {
	conn, err := service.DialBridge(ctx, reg)
	if err != nil {
		return err
	}
	defer conn.Close()
	phase(fmt.Sprintf("pi (pid %d) is compacting", reg.PID))
	res, err := conn.Compact(ctx, instructions, bridgeProgress(phase))
	if bridge.IsCode(err, "nothingToCompact") {
		var be *bridge.Error
		errors.As(err, &be)
		if asJSON {
			return writeJSON(stdout, map[string]any{"nothingToCompact": true, "reason": be.Message, "via": "pi"})
		}
		fmt.Fprintln(stdout, be.Message)
		return nil
	}
	if err != nil {
		return fmt.Errorf("pi (pid %d): %w", reg.PID, err)
	}
	if asJSON {
		return writeJSON(stdout, map[string]any{"entry": res.Entry, "via": "pi", "pid": reg.PID})
	}
	var r struct {
		Summary      string  `json:"summary"`
		TokensBefore float64 `json:"tokensBefore"`
	}
	_ = json.Unmarshal(res.Result, &r)
	var e struct {
		ID               string `json:"id"`
		FirstKeptEntryID string `json:"firstKeptEntryId"`
	}
	_ = json.Unmarshal(res.Entry, &e)
	fmt.Fprintf(stdout, "Compacted %s by pi (pid %d)\n", filepath.Base(path), reg.PID)
	fmt.Fprintf(stdout, "entry %s, kept from %s\n\n%s\n\ntokens before: %d\n", e.ID, e.FirstKeptEntryID, r.Summary, int(r.TokensBefore))
	return nil
}

// navigateViaPi moves the live pi's leaf (with a branch summary when asked).
func navigateViaPi(ctx context.Context, reg *bridge.Registration, path string, req bridge.NavigateRequest, asJSON bool, stdout io.Writer, phase func(string)) error {
	conn, err := service.DialBridge(ctx, reg)
	if err != nil {
		return err
	}
	defer conn.Close()
	res, err := conn.Navigate(ctx, req, bridgeProgress(phase))
	if err != nil {
		return fmt.Errorf("pi (pid %d): %w", reg.PID, err)
	}
	if asJSON {
		out := map[string]any{"leafId": session.IDOrNull(res.LeafID), "via": "pi", "pid": reg.PID}
		if res.SummaryEntry != nil {
			out["summaryEntry"] = res.SummaryEntry
		}
		if res.Cancelled {
			out["cancelled"] = true
		}
		return writeJSON(stdout, out)
	}
	if res.Cancelled {
		fmt.Fprintf(stdout, "pi (pid %d) did not move: the navigation was cancelled\n", reg.PID)
		return nil
	}
	fmt.Fprintf(stdout, "Moved %s by pi (pid %d) from %s\n", filepath.Base(path), reg.PID, res.OldLeafID)
	if res.SummaryEntry != nil {
		var e struct {
			ID      string `json:"id"`
			Summary string `json:"summary"`
		}
		_ = json.Unmarshal(res.SummaryEntry, &e)
		fmt.Fprintf(stdout, "branch summary %s:\n\n%s\n\n", e.ID, e.Summary)
	}
	fmt.Fprintf(stdout, "leaf: %s\n", res.LeafID)
	return nil
}

// labelViaPi sets a label through the live pi.
func labelViaPi(ctx context.Context, reg *bridge.Registration, entryID, text string, asJSON bool, stdout io.Writer) error {
	conn, err := service.DialBridge(ctx, reg)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Label(ctx, entryID, text); err != nil {
		return fmt.Errorf("pi (pid %d): %w", reg.PID, err)
	}
	if asJSON {
		return writeJSON(stdout, map[string]any{"entryId": entryID, "label": session.IDOrNull(text), "via": "pi", "pid": reg.PID})
	}
	if text == "" {
		fmt.Fprintf(stdout, "label of %s cleared by pi (pid %d)\n", entryID, reg.PID)
	} else {
		fmt.Fprintf(stdout, "label %q set on %s by pi (pid %d)\n", text, entryID, reg.PID)
	}
	return nil
}
