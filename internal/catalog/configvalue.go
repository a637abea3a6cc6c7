package catalog

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// A config value of models.json (apiKey, header values) or of a key saved in auth.json is,
// as pi-coding-agent's resolve-config-value reads it: "!command" (the command's trimmed
// standard output, run by the shell within 10 s), or a template whose "$NAME" and "${NAME}"
// are environment variables ("$$" is a literal "$", "$!" a literal "!"), anything else
// literal.

var (
	envNameRe       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	envNamePrefixRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)
)

type templatePart struct {
	literal string
	env     string // set for an environment reference
}

// parseTemplate is Pi's parseConfigValueTemplate.
func parseTemplate(config string) []templatePart {
	var parts []templatePart
	lit := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].env == "" {
			parts[n-1].literal += s
			return
		}
		parts = append(parts, templatePart{literal: s})
	}
	i := 0
	for i < len(config) {
		d := strings.IndexByte(config[i:], '$')
		if d < 0 {
			lit(config[i:])
			break
		}
		d += i
		lit(config[i:d])
		next := byte(0)
		if d+1 < len(config) {
			next = config[d+1]
		}
		switch {
		case next == '$' || next == '!':
			lit(string(next))
			i = d + 2
		case next == '{':
			end := strings.IndexByte(config[d+2:], '}')
			if end < 0 {
				lit("$")
				i = d + 1
				continue
			}
			end += d + 2
			name := config[d+2 : end]
			if envNameRe.MatchString(name) {
				parts = append(parts, templatePart{env: name})
			} else {
				lit(config[d : end+1])
			}
			i = end + 1
		default:
			if m := envNamePrefixRe.FindString(config[d+1:]); m != "" {
				parts = append(parts, templatePart{env: m})
				i = d + 1 + len(m)
				continue
			}
			lit("$")
			i = d + 1
		}
	}
	return parts
}

// isCommand reports whether a config value is a "!command".
func isCommand(config string) bool { return strings.HasPrefix(config, "!") }

// envNames are the environment variables a template config value reads (none for a
// command), each once, in order.
func envNames(config string) []string {
	if isCommand(config) {
		return nil
	}
	var names []string
	for _, p := range parseTemplate(config) {
		if p.env != "" && !contains(names, p.env) {
			names = append(names, p.env)
		}
	}
	return names
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Env looks an environment variable up; nil means the process environment. A stored
// credential's "env" object is consulted first, as Pi does.
type Env func(name string) string

func (e Env) get(name string, extra map[string]string) string {
	if v := extra[name]; v != "" {
		return v
	}
	if e == nil {
		return os.Getenv(name)
	}
	return e(name)
}

// CommandTimeout bounds a "!command" config value, as Pi's (10 s).
const CommandTimeout = 10 * time.Second

// ResolveValue resolves a config value of models.json or auth.json as Pi does (literal,
// "$NAME"/"${NAME}", "!command") with the process environment; the error never holds
// the value.
func ResolveValue(ctx context.Context, config string) (string, error) {
	return resolveValue(ctx, config, "the value", nil, nil)
}

// resolveValue is Pi's resolveConfigValueOrThrow: the value, or an error in Pi's words
// (what description names, and which variable or command failed; never the value).
func resolveValue(ctx context.Context, config, description string, env Env, extra map[string]string) (string, error) {
	if isCommand(config) {
		out, err := runCommand(ctx, config[1:])
		if err != nil || out == "" {
			why := "it printed nothing"
			if err != nil {
				why = err.Error()
			}
			return "", fmt.Errorf("failed to resolve %s from %s: %s", description, DescribeValue(config), why)
		}
		return out, nil
	}
	var b strings.Builder
	var missing []string
	for _, p := range parseTemplate(config) {
		if p.env == "" {
			b.WriteString(p.literal)
			continue
		}
		v := env.get(p.env, extra)
		if v == "" {
			if !contains(missing, p.env) {
				missing = append(missing, p.env)
			}
			continue
		}
		b.WriteString(v)
	}
	switch len(missing) {
	case 0:
		return b.String(), nil
	case 1:
		return "", fmt.Errorf("failed to resolve %s from environment variable: %s", description, missing[0])
	}
	return "", fmt.Errorf("failed to resolve %s from environment variables: %s", description, strings.Join(missing, ", "))
}

// runCommand runs a command through the shell as Pi's execSync does (stdin and stderr
// ignored, stdout trimmed), within CommandTimeout.
func runCommand(ctx context.Context, command string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	inGroup(cmd)
	cmd.Stdin, cmd.Stderr = nil, nil
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// configured is Pi's configuredRequestAuthStatus for a models.json apiKey: a command
// counts as configured without running it, a template when all its variables are set.
func configured(config string, env Env) bool {
	if isCommand(config) {
		return true
	}
	for _, n := range envNames(config) {
		if env.get(n, nil) == "" {
			return false
		}
	}
	return true
}

// DescribeValue says what kind of config value config is, never its secret: `"$NAME"`
// (and the variables it reads), a command, or a literal.
func DescribeValue(config string) string {
	switch {
	case isCommand(config):
		// Only the program: the rest of a command line may hold the key itself, and so
		// may the NAME=value words before the program (!TOKEN=… op read …).
		return fmt.Sprintf("the output of the command %q", "!"+commandProgram(config[1:])+" …")
	case len(envNames(config)) > 0:
		return fmt.Sprintf("%q (environment variable %s)", config, strings.Join(envNames(config), ", "))
	}
	return "a literal key"
}

// commandProgram is the program a shell command line runs: its first word that is not an
// environment assignment (NAME=value), or "…" when there is none.
func commandProgram(command string) string {
	for _, w := range strings.Fields(command) {
		if name, _, ok := strings.Cut(w, "="); ok && isEnvName(name) {
			continue
		}
		return w
	}
	return "…"
}

// isEnvName reports whether s is a shell variable name.
func isEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}
