package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
)

// The verify mode (walker.verify, a plan that never trusts a memo):
// every cached compute node is recomputed and compared with its record.

// Verify recomputes every cached deterministic node of the graph and
// compares the result with the cache (Go's GODEBUG=gocacheverify=1 for
// ideaflow): a mismatch means a stage changed its outputs without a
// Version bump. It makes no calls and writes nothing.
func (e *Engine) Verify(g *Graph) *VerifyReport {
	w := e.newWalker(g, true)
	w.verify = true
	w.walk(e.Resolvers)
	sort.Slice(w.mismatches, func(i, j int) bool { return w.mismatches[i].Address < w.mismatches[j].Address })
	return &VerifyReport{Verified: w.verified, Mismatches: w.mismatches}
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Verified   int              `json:"verified"`
	Mismatches []VerifyMismatch `json:"mismatches,omitempty"`
}

// VerifyMismatch is a cached deterministic node whose recomputed output
// differs from the cache: a stage changed its outputs without a Version bump.
type VerifyMismatch struct {
	Address string `json:"address"`
	Key     string `json:"key"`
	Error   string `json:"error,omitempty"` // recomputing failed
}

func (w *walker) verifyCompute(n *Node, work *stages.Work, rec *cache.Record) {
	out, err := work.Compute()
	w.errMu.Lock()
	defer w.errMu.Unlock()
	w.verified++
	switch {
	case err != nil:
		w.mismatches = append(w.mismatches, VerifyMismatch{Address: n.Address, Key: rec.Key, Error: err.Error()})
	case !bytes.Equal(out, rec.Output):
		w.mismatches = append(w.mismatches, VerifyMismatch{Address: n.Address, Key: rec.Key})
	}
}

// sampleCall is a cached call node VerifySample may ask again.
type sampleCall struct {
	address string
	work    *stages.Work
	rec     *cache.Record
}

func (w *walker) noteSampleCall(n *Node, work *stages.Work, rec *cache.Record) {
	w.errMu.Lock()
	*w.resample = append(*w.resample, sampleCall{n.Address, work, rec})
	w.errMu.Unlock()
}

// SampleOptions choose the cached calls VerifySample asks again.
type SampleOptions struct {
	Fraction float64 // of the cached call nodes, rounded up: 0.05 for 5%
	Seed     int64
	MaxCost  float64 // USD; 0: no limit. A call whose estimate would pass it is not sent.
}

// SampleReport is what VerifySample found, per provider.
type SampleReport struct {
	Cached    int                       `json:"cached_calls"` // the cached call nodes sampled from
	Providers map[string]*ProviderDrift `json:"providers"`
	CostUSD   float64                   `json:"cost_usd"`
	// OverBudget counts the sampled calls not sent: their estimate would
	// have taken the cost past MaxCost.
	OverBudget int `json:"over_budget,omitempty"`
}

// ProviderDrift is how far one provider's answers moved when asked again.
type ProviderDrift struct {
	Sampled      int     `json:"sampled"`
	Asked        int     `json:"asked"`
	Failed       int     `json:"failed,omitempty"` // the call failed, or its answer no longer parsed
	SameAnswer   int     `json:"same_answer"`      // the raw answer text is byte for byte the cached one
	SameOutput   int     `json:"same_output"`      // the parsed output is the cached one
	Scores       int     `json:"scores"`           // numbers compared (the outputs' numeric fields present in both)
	ScoresMoved  int     `json:"scores_moved"`     // of those, numbers that differ
	MeanAbsDelta float64 `json:"mean_abs_delta"`   // mean |new - cached| over the numbers compared
	sumDelta     float64
}

// VerifySample asks again a seeded sample of the graph's cached call nodes
// (model calls; service calls are not resampled) and compares each answer
// with its record, like Go's GODEBUG=gocacheverify for builds, but for
// answers that a model is free to change: it reports how often and how far
// they moved. It writes nothing: the cache keeps the answers results rest on.
func (e *Engine) VerifySample(ctx context.Context, g *Graph, opts SampleOptions) (*SampleReport, error) {
	if e.Exec == nil {
		return nil, errors.New("engine has no executor")
	}
	var calls []sampleCall
	w := e.newWalker(g, true)
	w.verify = true
	w.resample = &calls
	w.walk(e.Resolvers)
	rep := &SampleReport{Cached: len(calls), Providers: map[string]*ProviderDrift{}}
	// The sample: the calls ordered by a digest of the seed and their key,
	// the first ceil(fraction * n) of them. The same seed and cache sample
	// the same calls, and a larger fraction adds to a smaller one's sample.
	ranks := make(map[string]string, len(calls))
	for _, c := range calls {
		h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", opts.Seed, c.rec.Key)))
		ranks[c.rec.Key] = hex.EncodeToString(h[:])
	}
	sort.Slice(calls, func(i, j int) bool { return ranks[calls[i].rec.Key] < ranks[calls[j].rec.Key] })
	n := int(math.Ceil(opts.Fraction * float64(len(calls))))
	n = min(max(n, 0), len(calls))
	for _, c := range calls[:n] {
		pd := rep.Providers[c.work.Call.Model.Provider]
		if pd == nil {
			pd = &ProviderDrift{}
			rep.Providers[c.work.Call.Model.Provider] = pd
		}
		pd.Sampled++
		tk, est := newTask(c.rec.Key, c.address, c.work)
		if opts.MaxCost > 0 && rep.CostUSD+est > opts.MaxCost {
			rep.OverBudget++
			continue
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		pd.Asked++
		res, err := e.Exec.Execute(ctx, tk)
		if err != nil {
			var ee *ExecError
			if errors.As(err, &ee) {
				rep.CostUSD += ee.Usage.CostUSD
			}
			pd.Failed++
			continue
		}
		rep.CostUSD += res.Usage.CostUSD
		if res.Raw == c.rec.Raw {
			pd.SameAnswer++
		}
		out, err := applyOutput(c.work, res)
		if err != nil {
			pd.Failed++
			continue
		}
		if bytes.Equal(out, c.rec.Output) {
			pd.SameOutput++
		}
		compareNumbers(pd, c.rec.Output, out)
	}
	for _, pd := range rep.Providers {
		if pd.Scores > 0 {
			pd.MeanAbsDelta = pd.sumDelta / float64(pd.Scores)
		}
	}
	return rep, nil
}

// compareNumbers adds the numeric fields of two outputs present in both (by
// JSON path) to pd's score deltas.
func compareNumbers(pd *ProviderDrift, old, cur []byte) {
	a, b := map[string]float64{}, map[string]float64{}
	var va, vb any
	if json.Unmarshal(old, &va) != nil || json.Unmarshal(cur, &vb) != nil {
		return
	}
	numbers("", va, a)
	numbers("", vb, b)
	for path, x := range a {
		y, ok := b[path]
		if !ok {
			continue
		}
		pd.Scores++
		if d := math.Abs(y - x); d != 0 {
			pd.ScoresMoved++
			pd.sumDelta += d
		}
	}
}

func numbers(path string, v any, out map[string]float64) {
	switch t := v.(type) {
	case float64:
		out[path] = t
	case map[string]any:
		for k, x := range t {
			numbers(path+"."+k, x, out)
		}
	case []any:
		for i, x := range t {
			numbers(fmt.Sprintf("%s[%d]", path, i), x, out)
		}
	}
}
