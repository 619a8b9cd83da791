package aggregate

import (
	"errors"
	"fmt"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// aggregateType is the aggregate stage: a statistic of any per-item score.
type aggregateType struct{}

func (aggregateType) Name() string    { return "aggregate" }
func (aggregateType) Version() string { return "1" }

func (aggregateType) Params() []stages.Param {
	return append([]stages.Param{
		{Name: "scores", Kind: stages.Input, Required: true, Doc: "the per-item scores: an aggregate score stage (insight_score, similarity_score, ...) or a per-item stage with value_field"},
	}, statisticParams()...)
}

// AggregateOutput is the aggregate stage's output: a stages.Score (so every
// report reads it) whose Value is the statistic over PerItem, Count the
// items scored, Missing the items whose inputs failed, Extra["dropped"]
// the items dropped upstream; Statistic names it ("mean", "median", "p30").
type AggregateOutput struct {
	stages.Score
	Statistic string `json:"statistic"`
}

func (aggregateType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	up, field, st, err := scoreInput(inst.Params)
	if err != nil {
		return nil, err
	}
	return []stages.Node{{
		Deps:         stages.AllDeps("scores", up),
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				iv, err := readItems(up, in, field)
				if err != nil {
					return nil, err
				}
				out := AggregateOutput{Score: baseScore(iv), Statistic: st.label()}
				if len(iv.items) > 0 {
					out.Value = st.fn()(iv.column())
				}
				return stages.EncodeOutput(out)
			}}, nil
		},
	}}, nil
}

// scoreInput reads the params bootstrap and aggregate share.
func scoreInput(p stages.Params) (*stages.Upstream, string, statistic, error) {
	up, err := stages.RequireInput(p, "scores")
	if err != nil {
		return nil, "", statistic{}, err
	}
	st, err := readStatistic(p)
	if err != nil {
		return nil, "", st, err
	}
	field, err := fieldFor("scores", p.String("value_field"), up)
	return up, field, st, err
}

// baseScore is the Score of iv without its statistic: counts and PerItem.
func baseScore(iv *itemValues) stages.Score {
	s := stages.Score{Count: len(iv.items), Missing: iv.missing, Extra: map[string]float64{"dropped": float64(iv.dropped)}, PerItem: iv.values}
	return s
}

// bootstrapType is the bootstrap stage: a statistic of any per-item score
// with its bootstrap confidence interval over items.
type bootstrapType struct{}

func (bootstrapType) Name() string    { return "bootstrap" }
func (bootstrapType) Version() string { return "1" }

func (bootstrapType) Params() []stages.Param {
	ps := append([]stages.Param{
		{Name: "scores", Kind: stages.Input, Required: true, Doc: "the per-item scores: an aggregate score stage (insight_score, similarity_score, ...) or a per-item stage with value_field; one bootstrap per instance"},
	}, statisticParams()...)
	return append(ps, bootstrapParams()...)
}

// BootstrapOutput is the bootstrap stage's output. It is a stages.Score, so
// a report column reads it like any score:
//
//   - Value: the statistic on the items as scored (for statistic = "mean"
//     over an insight_score, that score's Value);
//   - Count, Missing, PerItem: the items resampled, those whose inputs
//     failed, and their values; Extra["dropped"]: items dropped upstream;
//   - Extra["ci_low"], Extra["ci_high"]: the interval, at Extra["ci_level"]
//     (0.95), from Extra["resamples"] resamples (absent when Count is 0).
//
// Statistic ("mean", "median", "p30"), Method ("percentile" or "bca") and
// Seed say how the interval was made.
type BootstrapOutput struct {
	stages.Score
	Statistic string `json:"statistic"`
	Method    string `json:"method"`
	Seed      int    `json:"seed"`
}

func (bootstrapType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	up, field, st, err := scoreInput(inst.Params)
	if err != nil {
		return nil, err
	}
	opts, err := readOptions(inst.Params)
	if err != nil {
		return nil, err
	}
	method := inst.Params.String("method")
	seed := inst.Params.Int("seed")
	return []stages.Node{{
		Deps:         stages.AllDeps("scores", up),
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				iv, err := readItems(up, in, field)
				if err != nil {
					return nil, err
				}
				out := BootstrapOutput{Score: baseScore(iv), Statistic: st.label(), Method: method, Seed: seed}
				if len(iv.items) == 0 {
					return stages.EncodeOutput(out)
				}
				ci, err := stats.Bootstrap(iv.column(), st.fn(), opts)
				if err != nil {
					return nil, bootstrapError(up, err)
				}
				out.Value = ci.Estimate
				out.Extra["ci_low"] = ci.Lower
				out.Extra["ci_high"] = ci.Upper
				out.Extra["ci_level"] = ci.Level
				out.Extra["resamples"] = float64(opts.Resamples)
				return stages.EncodeOutput(out)
			}}, nil
		},
	}}, nil
}

// bootstrapError explains what to change when stats refuses.
func bootstrapError(up *stages.Upstream, err error) error {
	if errors.Is(err, stats.ErrUndefined) {
		return fmt.Errorf("bootstrap of %s: %w (set method = \"percentile\", which is defined for any data)", up.Address, err)
	}
	return fmt.Errorf("bootstrap of %s: %w", up.Address, err)
}
