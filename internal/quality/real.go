package quality

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The real-session corpus: sessions no one here wrote, listed in corpus.tsv (source
// repository, commit, path, license) and kept out of the repository: they are imported
// into a local directory (testdata/real, git-ignored) by `go run ./tools/quality
// -import-real`, and the benchmark runs over whatever that directory holds.

//go:embed corpus.tsv
var corpusTSV string

// RealSource is one session of the corpus as the manifest lists it.
type RealSource struct {
	Name, Repo, Commit, Path, License string
	// HeldOut is chosen by a fixed rule on the source (a hash of repository and path),
	// before any summary is seen: a quarter of the corpus.
	HeldOut bool
}

// RealSources is the manifest.
func RealSources() []RealSource {
	var out []RealSource
	sc := bufio.NewScanner(strings.NewReader(corpusTSV))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			panic("corpus.tsv: want 5 fields: " + line)
		}
		out = append(out, RealSource{Name: f[0], Repo: f[1], Commit: f[2], Path: f[3], License: f[4]})
	}
	// The held-out quarter: the sources whose hash (of repository and path) is lowest.
	byHash := make([]int, len(out))
	for i := range out {
		byHash[i] = i
	}
	sort.SliceStable(byHash, func(a, b int) bool { return sourceHash(out[byHash[a]]) < sourceHash(out[byHash[b]]) })
	for _, i := range byHash[:(len(out)+3)/4] {
		out[i].HeldOut = true
	}
	return out
}

func sourceHash(s RealSource) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s.Repo + ":" + s.Path))
	return h.Sum32()
}

// RealResult is one real session summarized and probed.
type RealResult struct {
	Source       RealSource
	Summary      string
	Probes       []ProbeResult
	Continuation float64
	Clean        []string // what makes the output unclean (none: clean)
	Stale        []string // stale blockers (none: good)
	SplitTurn    bool
	HasPrevious  bool
	SpanMessages int
}

// realKeep is the recent part a compaction of a real session keeps: Pi's default
// (20,000 tokens), or a quarter of a smaller session, so every session has a span to
// summarize.
func realKeep(path []*session.Entry) int {
	total := 0
	for _, e := range path {
		if m := session.MessageOf(e); m != nil {
			total += session.EstimateTokens(m)
		}
	}
	keep := session.DefaultCompactionSettings.KeepRecentTokens
	if q := total / 4; q < keep {
		keep = q
	}
	if keep < 200 {
		keep = 200
	}
	return keep
}

// ProduceReal compacts a real session through the real code path and probes the
// summary against its span.
func ProduceReal(ctx context.Context, src RealSource, data []byte, s compaction.Summarizer) (*RealResult, error) {
	f, err := session.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	}
	ix := session.NewIndex(f)
	path := ix.Path(ix.LeafID())
	// A session that ends on a compaction is compacted as it was before it.
	for len(path) > 0 && path[len(path)-1].Type == session.TypeCompaction {
		path = path[:len(path)-1]
	}
	settings := session.DefaultCompactionSettings
	settings.KeepRecentTokens = realKeep(path)
	p, o, span, err := compact(ctx, path, settings, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	}
	facts := DeriveFacts(span)
	r := &RealResult{Source: src, Summary: o.Summary, SplitTurn: p.IsSplitTurn, HasPrevious: p.HasPrevious, SpanMessages: len(span)}
	r.Probes = ScoreProbes(facts, o.Summary)
	var sum float64
	for _, pr := range r.Probes {
		sum += pr.Score
	}
	r.Continuation = sum / float64(len(r.Probes))
	r.Clean = CleanIssues(o.Summary)
	r.Stale = StaleIssues(facts, o.Summary)
	return r, nil
}

// RealRun is a summarizer's results over the real corpus found in a directory.
type RealRun struct {
	Summarizer string
	Results    []*RealResult
	Missing    []string // sources of the manifest not in the directory
	Skipped    []string // sessions Pi would not compact (too small once converted)
}

// ErrNoCorpus: the directory holds none of the manifest's sessions.
var ErrNoCorpus = errors.New("no real session found")

// RunReal runs s over the manifest's sessions found in dir (<name>.jsonl each).
func RunReal(ctx context.Context, dir string, s compaction.Summarizer, only string) (*RealRun, error) {
	run := &RealRun{Summarizer: s.Name()}
	for _, src := range RealSources() {
		if !strings.Contains(src.Name, only) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, src.Name+".jsonl"))
		if errors.Is(err, fs.ErrNotExist) {
			run.Missing = append(run.Missing, src.Name)
			continue
		}
		if err != nil {
			return nil, err
		}
		r, err := ProduceReal(ctx, src, data, s)
		if errors.Is(err, compaction.ErrNothingToCompact) {
			run.Skipped = append(run.Skipped, src.Name)
			continue
		}
		if err != nil {
			return nil, err
		}
		run.Results = append(run.Results, r)
	}
	if len(run.Results) == 0 {
		return run, ErrNoCorpus
	}
	return run, nil
}

// Stats of a run over the results keep selects (all when nil).
func (r *RealRun) Stats(keep func(*RealResult) bool) (n int, continuation, clean float64, stale int) {
	var sum float64
	cleanN := 0
	for _, res := range r.Results {
		if keep != nil && !keep(res) {
			continue
		}
		n++
		sum += res.Continuation
		if len(res.Clean) == 0 {
			cleanN++
		}
		if len(res.Stale) > 0 {
			stale++
		}
	}
	if n == 0 {
		return 0, math.NaN(), math.NaN(), 0
	}
	return n, sum / float64(n), float64(cleanN) / float64(n), stale
}

// ProbeMean is the mean score of one probe where it applies, and how often it does.
func (r *RealRun) ProbeMean(name string, keep func(*RealResult) bool) (float64, int) {
	var sum float64
	n := 0
	for _, res := range r.Results {
		if keep != nil && !keep(res) {
			continue
		}
		for _, p := range res.Probes {
			if p.Name == name {
				sum += p.Score
				n++
			}
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return sum / float64(n), n
}

// ProbeNames are the probes in report order.
var ProbeNames = []string{"latest request", "every request", "files modified", "open failure", "last intent", "open todos", "ids typed", "last action", "next step"}

// RealHeldOut and RealTuning select results.
func RealHeldOut(r *RealResult) bool { return r.Source.HeldOut }
func RealTuning(r *RealResult) bool  { return !r.Source.HeldOut }
