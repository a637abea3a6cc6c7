package rpc_test

// The rpc tests use the shared LSP harness (internal/testsupport/lsptest) and fake
// summarizer (internal/testsupport/fakemodel); these aliases keep their short names
// here, so the tests read as before.

import (
	"encoding/json"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// corpusDir holds genuine sessions written by real Pi 0.73.1.
var corpusDir = corpus.Path("genuine")

type (
	MsgKind     = lsptest.MsgKind
	Msg         = lsptest.Msg
	Hooks       = lsptest.Hooks
	Env         = lsptest.Env
	Config      = lsptest.Config
	CallError   = lsptest.CallError
	Pending     = lsptest.Pending
	Verdict     = lsptest.Verdict
	Expectation = lsptest.Expectation
	Progress    = lsptest.Progress
	FakeLLM     = fakemodel.Summarizer
	syncBuffer  = lsptest.SyncBuffer
)

const (
	KindNotification = lsptest.KindNotification
	KindCall         = lsptest.KindCall
	KindResponse     = lsptest.KindResponse
	KindUndecodable  = lsptest.KindUndecodable

	Unmet      = lsptest.Unmet
	Met        = lsptest.Met
	Unmeetable = lsptest.Unmeetable
)

var (
	NewEnv                 = lsptest.NewEnv
	Since                  = lsptest.Since
	OnceMet                = lsptest.OnceMet
	AnyOf                  = lsptest.AnyOf
	NotificationMatching   = lsptest.NotificationMatching
	NoNotification         = lsptest.NoNotification
	ServerCall             = lsptest.ServerCall
	ResponseTo             = lsptest.ResponseTo
	Progresses             = lsptest.Progresses
	ProgressOf             = lsptest.ProgressOf
	CompletedProgress      = lsptest.CompletedProgress
	ProgressBeginAtZero    = lsptest.ProgressBeginAtZero
	ProgressReportMatching = lsptest.ProgressReportMatching
	NewFakeLLM             = fakemodel.NewSummarizer

	trunc    = lsptest.Trunc
	fields   = lsptest.Fields
	has      = lsptest.Has
	mustRead = lsptest.MustRead
	merge    = lsptest.Merge
)

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	return lsptest.Decode[T](t, raw)
}
