package rpc

import (
	"context"
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// editContextParams are pi/editContext's params.
type editContextParams struct {
	entryWrite
	// Action is "omit", "replace" (with text) or "restore".
	Action string  `json:"action" ts:"\"omit\" | \"replace\" | \"restore\",required"`
	Text   *string `json:"text"`
}

// validate refuses an edit the params cannot name.
func (p *editContextParams) validate() error {
	if err := p.entryWrite.validate(); err != nil {
		return err
	}
	_, err := p.edit()
	return err
}

// edit is the edit the params ask for.
func (p *editContextParams) edit() (contextedit.Edit, error) {
	e := contextedit.Edit{TargetID: p.EntryID}
	switch p.Action {
	case "omit":
		e.Action = contextedit.Omit
	case "replace":
		if p.Text == nil {
			return e, invalidParams(`action "replace" needs text`)
		}
		e.Action, e.Text = contextedit.Replace, *p.Text
	case "restore":
		e.Action = contextedit.Restore
	default:
		return e, invalidParams(`action must be "omit", "replace" or "restore"`)
	}
	if p.Text != nil && e.Action != contextedit.Replace {
		return e, invalidParams(`text is only for action "replace"`)
	}
	return e, nil
}

// handleEditContext hides, replaces or restores one message of the context, through the
// write sequence of every command that writes (s.write).
func (s *Server) handleEditContext(ctx context.Context, p editContextParams) (EditContextResult, error) {
	e, _ := p.edit() // validated
	return write(s, ctx, writeJob[EditContextResult]{target: p.target(), service: true}, func(ctx context.Context, path string, _ *WorkDone) (EditContextResult, error) {
		res, err := s.svc().EditContext(ctx, service.EditContextRequest{Path: path, Edit: e, Force: p.Force}, jobReporter{s: s, path: path})
		if err != nil {
			return EditContextResult{}, editError(err)
		}
		s.resetLoop(path)
		return EditContextResult{Session: path, Entry: session.Raw[session.ContextEditEntry](res.Entry.Raw()),
			TokensBefore: res.TokensBefore, TokensAfter: res.TokensAfter}, nil
	})
}

// editError gives a refused edit its code and kind: a target the edit cannot name is
// invalid params; a file changed under the edit is ContentModified (by wireError).
func editError(err error) error {
	kind := ""
	switch {
	case errors.Is(err, contextedit.ErrNotFound):
		return &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: err.Error(), Err: err}
	case errors.Is(err, contextedit.ErrNotOnBranch):
		kind = KindNotOnBranch
	case errors.Is(err, contextedit.ErrNotEditable), errors.Is(err, contextedit.ErrBadReplacement):
		kind = KindNotEditable
	case errors.Is(err, contextedit.ErrSummarized):
		kind = KindSummarized
	case errors.Is(err, contextedit.ErrNotEdited):
		kind = KindNotEdited
	case errors.Is(err, contextedit.ErrOldFormat):
		return badSession(err)
	case errors.Is(err, session.ErrChanged):
		return &Error{Code: CodeContentModified, Kind: KindSessionChanged, Msg: err.Error(), Err: err}
	default:
		return err
	}
	return &Error{Code: CodeInvalidParams, Kind: kind, Msg: err.Error(), Err: err}
}

func (p *contextBySizeParams) validate() error {
	if p.Limit < 0 {
		return invalidParams("limit must not be negative")
	}
	return nil
}

// handleContextBySize lists the messages of the current context by estimated tokens,
// largest first.
func (s *Server) handleContextBySize(ctx context.Context, p contextBySizeParams) (ContextBySizeResult, error) {
	var out ContextBySizeResult
	_, err := s.withSession(p.Session, func(path string, ix *session.Index) error {
		leafPath := ix.LeafPath()
		sizes, err := contextedit.BySize(ctx, leafPath, p.Limit)
		if err != nil {
			return err
		}
		tokens, window, pct := s.host.usage(leafPath)
		out = ContextBySizeResult{Session: path, LeafID: nullable(ix.LeafID()), Tokens: tokens,
			ContextWindow: window, Percent: pct, ProjectedTokens: sizes.Tokens, Messages: sizes.Items}
		return nil
	})
	return out, err
}
