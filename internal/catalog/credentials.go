package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Credential is what a request to a model is authorized with.
type Credential struct {
	APIKey string
	// Headers are the configured request headers, resolved: the provider's models.json
	// headers (and Authorization: Bearer when authHeader is set or the key came from a
	// bearer variable), then the model's (modelOverrides, then models[]).
	Headers map[string]string
	// OAuth: the key is an account login's bearer token.
	OAuth bool
	// Source says where the credential came from, for messages: `models.json apiKey
	// "$MYKEY" (environment variable MYKEY)`, "environment variable ANTHROPIC_API_KEY", ...
	Source string
	// Fix is what the user runs when the provider refuses the credential.
	Fix string
}

// ErrNoCredential: no credential for the provider could be found or resolved
// (errors.Is); the error's text says what was tried and how to fix it.
var ErrNoCredential = errors.New("no credential")

// CredentialError is a credential that could not be found or resolved.
type CredentialError struct {
	Provider string
	Reason   string // what failed, without any secret
	Fix      string // the command or setting that fixes it
}

func (e *CredentialError) Error() string {
	msg := fmt.Sprintf("no usable credential for provider %s: %s", e.Provider, e.Reason)
	if e.Fix != "" {
		msg += "; fix: " + e.Fix
	}
	return msg
}

func (e *CredentialError) Unwrap() error { return ErrNoCredential }

// Resolver resolves credentials as the user's pi would.
type Resolver struct {
	// AgentDir holds auth.json and models.json.
	AgentDir string
	// Env looks variables up (nil: the process environment).
	Env Env
	// Pi is the user's pi ("" to look it up on PATH, "-" for none). A credential saved
	// in auth.json is resolved by running it.
	Pi string
	// RunPi, when set, replaces running Pi (tests).
	RunPi func(ctx context.Context, args ...string) (string, error)
}

// storedCredential is an auth.json entry, as far as pi-lsp reads it.
type storedCredential struct {
	Type string            `json:"type"`
	Key  string            `json:"key"`
	Env  map[string]string `json:"env"`
}

// stored is the auth.json entry of provider, or nil. auth.json is only read.
func (r Resolver) stored(provider string) *storedCredential {
	if r.AgentDir == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(r.AgentDir, "auth.json"))
	if err != nil {
		return nil
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &all) != nil {
		return nil
	}
	raw, ok := all[provider]
	if !ok {
		return nil
	}
	var c storedCredential
	if json.Unmarshal(raw, &c) != nil || (c.Type != "api_key" && c.Type != "oauth") {
		return nil
	}
	return &c
}

// Configured is Pi's hasConfiguredAuth for a provider: a credential saved in auth.json,
// a models.json apiKey whose variables are set (a command counts without running it), or
// one of the provider's environment variables.
func (r Resolver) Configured(c *Catalog, provider string) bool {
	p := c.Provider(provider)
	if p == nil {
		return false
	}
	if s := r.stored(provider); s != nil {
		return (s.Type == "oauth" && p.OAuth != "") || (s.Type == "api_key" && p.APIKey)
	}
	if p.Config != nil && p.Config.APIKey != nil {
		return configured(*p.Config.APIKey, r.Env)
	}
	for _, v := range p.Env {
		if r.Env.get(v.Name, nil) != "" {
			return true
		}
	}
	return false
}

// SourceOf says where the credential of provider would come from, in Pi's order, without
// resolving it (no command runs): what an editor shows before a job ("" for none).
func (r Resolver) SourceOf(c *Catalog, provider string) string {
	p := c.Provider(provider)
	if p == nil {
		return ""
	}
	if s := r.stored(provider); s != nil {
		if s.Type == "oauth" {
			return "the account login saved in auth.json (through pi auth print-bearer-token)"
		}
		return "the key saved in auth.json (through pi auth print-api-key)"
	}
	if p.Config != nil && p.Config.APIKey != nil {
		return "models.json apiKey " + DescribeValue(*p.Config.APIKey)
	}
	for _, v := range p.Env {
		if r.Env.get(v.Name, nil) != "" {
			return "environment variable " + v.Name
		}
	}
	return ""
}

// loginFix is the command that gives the provider a credential.
func loginFix(p *Provider) string {
	switch {
	case p.OAuth != "":
		return "pi auth login " + p.ID
	case p.Builtin:
		if len(p.Env) > 0 {
			return fmt.Sprintf("pi auth login %s --api-key, or export %s", p.ID, p.Env[len(p.Env)-1].Name)
		}
		return "pi auth login " + p.ID + " --api-key"
	}
	return fmt.Sprintf("pi auth login %s --api-key, or set apiKey of provider %s in models.json", p.ID, p.ID)
}

// Resolve finds the credential of a request to m, in Pi 1.6.0's order: a credential saved
// in auth.json (asked of the user's pi), the models.json apiKey, the provider's
// environment variables; then the configured headers.
func (r Resolver) Resolve(ctx context.Context, c *Catalog, m *Model) (*Credential, error) {
	p := c.Provider(m.Provider)
	if p == nil {
		return nil, &CredentialError{Provider: m.Provider, Reason: "the provider is not in Pi's catalog or models.json"}
	}
	cred, extraEnv, err := r.key(ctx, p, m)
	if err != nil {
		return nil, err
	}
	headers := map[string]string{}
	for k, v := range cred.Headers {
		headers[k] = v
	}
	if p.Config != nil {
		for k, v := range p.Config.Headers {
			val, err := resolveValue(ctx, v, fmt.Sprintf("provider %q header %q", p.ID, k), r.Env, extraEnv)
			if err != nil {
				return nil, &CredentialError{Provider: p.ID, Reason: "models.json: " + err.Error(), Fix: "set the variable or fix headers in models.json"}
			}
			headers[k] = val
		}
		if p.Config.AuthHeader != nil && *p.Config.AuthHeader {
			if cred.APIKey == "" {
				return nil, &CredentialError{Provider: p.ID, Reason: "authHeader is set in models.json but no API key was resolved", Fix: cred.Fix}
			}
			headers["Authorization"] = "Bearer " + cred.APIKey
		}
		// The model's own headers: modelOverrides, then its definition.
		var model map[string]string
		if o, ok := p.Config.ModelOverrides[m.ID]; ok {
			model = o.Headers
		}
		for _, d := range p.Config.Models {
			if d.ID == m.ID && d.Headers != nil {
				merged := map[string]string{}
				for k, v := range model {
					merged[k] = v
				}
				for k, v := range d.Headers {
					merged[k] = v
				}
				model = merged
			}
		}
		for k, v := range model {
			val, err := resolveValue(ctx, v, fmt.Sprintf("model %q header %q", m.Ref(), k), r.Env, extraEnv)
			if err != nil {
				return nil, &CredentialError{Provider: p.ID, Reason: "models.json: " + err.Error(), Fix: "set the variable or fix headers in models.json"}
			}
			headers[k] = val
		}
	}
	if len(headers) > 0 {
		cred.Headers = headers
	} else {
		cred.Headers = nil
	}
	return cred, nil
}

// key is the API key (or bearer header) part of Resolve, with the stored credential's
// env, which header values may read.
func (r Resolver) key(ctx context.Context, p *Provider, m *Model) (*Credential, map[string]string, error) {
	if s := r.stored(p.ID); s != nil {
		cred, err := r.fromStored(ctx, p, m, s)
		return cred, s.Env, err
	}
	if p.Config != nil && p.Config.APIKey != nil {
		raw := *p.Config.APIKey
		key, err := resolveValue(ctx, raw, fmt.Sprintf("API key for provider %q", p.ID), r.Env, nil)
		source := "models.json apiKey " + DescribeValue(raw)
		if err != nil {
			fix := "set apiKey of provider " + p.ID + " in models.json"
			if names := envNames(raw); len(names) > 0 {
				fix = "export " + names[0] + " in the environment pi-lsp runs in"
			} else if isCommand(raw) {
				fix = "make the command print the key"
			}
			return nil, nil, &CredentialError{Provider: p.ID, Reason: "models.json: " + err.Error(), Fix: fix}
		}
		return &Credential{APIKey: key, Source: source, Fix: "check apiKey of provider " + p.ID + " in models.json (" + DescribeValue(raw) + ")"}, nil, nil
	}
	for _, v := range p.Env {
		val := r.Env.get(v.Name, nil)
		if val == "" {
			continue
		}
		cred := &Credential{Source: "environment variable " + v.Name, Fix: "check " + v.Name + " (or run " + loginFix(p) + ")"}
		if v.As == "bearer" {
			cred.Headers = map[string]string{"Authorization": "Bearer " + val}
		} else {
			cred.APIKey = val
		}
		return cred, nil, nil
	}
	reason := "none saved in auth.json"
	if p.Config == nil || p.Config.APIKey == nil {
		reason += ", no apiKey in models.json"
	}
	if len(p.Env) > 0 {
		names := make([]string, len(p.Env))
		for i, v := range p.Env {
			names[i] = v.Name
		}
		reason += ", and " + strings.Join(names, ", ") + " not set"
	}
	if p.CustomAuth {
		reason += " (pi-lsp does not read this provider's ambient cloud credentials)"
	}
	return nil, nil, &CredentialError{Provider: p.ID, Reason: reason, Fix: loginFix(p)}
}

// fromStored resolves a credential saved in auth.json through the user's pi, which reads
// it exactly as pi does and refreshes an account login; without a pi on PATH an API key
// is resolved here (literal, "$NAME" or "!command").
func (r Resolver) fromStored(ctx context.Context, p *Provider, m *Model, s *storedCredential) (*Credential, error) {
	oauth := s.Type == "oauth"
	if oauth && p.OAuth == "" {
		return nil, &CredentialError{Provider: p.ID, Reason: "auth.json holds an account login, but the provider has none", Fix: "pi auth logout " + p.ID}
	}
	cmd, source := "print-api-key", "the key saved in auth.json (through pi auth print-api-key)"
	if oauth {
		cmd, source = "print-bearer-token", "the account login saved in auth.json (through pi auth print-bearer-token)"
	}
	out, err := r.runPi(ctx, "auth", cmd, "--provider", p.ID, "--model", m.ID)
	switch {
	case err == nil && out != "":
		return &Credential{APIKey: out, OAuth: oauth, Source: source, Fix: "pi auth login " + p.ID}, nil
	case errors.Is(err, errNoPi) && !oauth:
		if s.Key == "" {
			return nil, &CredentialError{Provider: p.ID, Reason: "the key saved in auth.json is empty", Fix: "pi auth login " + p.ID + " --api-key"}
		}
		key, err := resolveValue(ctx, s.Key, fmt.Sprintf("the key of provider %q saved in auth.json", p.ID), r.Env, s.Env)
		if err != nil {
			return nil, &CredentialError{Provider: p.ID, Reason: err.Error(), Fix: "pi auth login " + p.ID + " --api-key"}
		}
		return &Credential{APIKey: key, Source: "the key saved in auth.json", Fix: "pi auth login " + p.ID + " --api-key"}, nil
	case errors.Is(err, errNoPi):
		return nil, &CredentialError{Provider: p.ID, Reason: "its account login (auth.json) is refreshed and printed by pi auth print-bearer-token, and no pi is on PATH", Fix: "put pi on PATH"}
	case err != nil:
		return nil, &CredentialError{Provider: p.ID, Reason: "pi auth " + cmd + " failed: " + err.Error(), Fix: "pi auth login " + p.ID}
	}
	return nil, &CredentialError{Provider: p.ID, Reason: "pi auth " + cmd + " printed nothing", Fix: "pi auth login " + p.ID}
}

var errNoPi = errors.New("no pi on PATH")

// PiTimeout bounds one `pi auth` command (pi's own limit is 15 s).
const PiTimeout = 30 * time.Second

// runPi runs the user's pi and returns its trimmed standard output; an error holds the
// first line of its standard error (which never holds the credential).
func (r Resolver) runPi(ctx context.Context, args ...string) (string, error) {
	if r.RunPi != nil {
		return r.RunPi(ctx, args...)
	}
	pi := r.Pi
	if pi == "-" {
		return "", errNoPi
	}
	if pi == "" {
		p, err := exec.LookPath("pi")
		if err != nil {
			return "", errNoPi
		}
		pi = p
	}
	ctx, cancel := context.WithTimeout(ctx, PiTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pi, args...)
	inGroup(cmd)
	cmd.WaitDelay = time.Second
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "PI_SKIP_VERSION_CHECK=1")
	if r.AgentDir != "" {
		cmd.Env = append(cmd.Env, "PI_CODING_AGENT_DIR="+r.AgentDir)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s did not answer within %s", pi, PiTimeout)
		}
		line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		line = strings.TrimPrefix(line, "Error: ")
		if line == "" {
			line = err.Error()
		}
		return "", errors.New(line)
	}
	return strings.TrimSpace(string(out)), nil
}
