package ideabench

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/ideaflow/ideaflow/stages"
)

// sanity_check checks one metric (or judge) on the baseline provider's
// controls, where the right answer is known before any model is asked:
//
//	check = "order": shuffled_words < copy_reference < target_oracle,
//	                 strictly (similarity and overlap: the target idea
//	                 itself must score above a copied reference abstract,
//	                 which must score above word salad)
//	check = "tie":   |target_oracle - tie| <= tolerance (the Insight Score
//	                 of the oracle, whose ideas are the target idea: a judge
//	                 without position bias ranks the copies level with the
//	                 target, 0.5 in expectation)
//
// Its Score's Value is 1 when the check holds and 0 when it fails (the
// metric or judge is flagged: Extra "failed" = 1), with the values checked
// in Extra, so a report column shows it beside the table it vouches for.

type sanityType struct{}

func (sanityType) Name() string    { return "sanity_check" }
func (sanityType) Version() string { return "1" }

var sanityScores = []string{"insight_score", "similarity_score", "overlap_score", "position_bias"}

func (sanityType) Params() []stages.Param {
	return []stages.Param{
		{Name: "check", Kind: stages.String, Default: "order", Doc: `"order" (shuffled_words < copy_reference < target_oracle) or "tie" (target_oracle within tolerance of tie)`},
		{Name: "shuffled_words", Kind: stages.Input, Accepts: sanityScores, Doc: "the metric's score of the shuffled_words baseline; required by order"},
		{Name: "copy_reference", Kind: stages.Input, Accepts: sanityScores, Doc: "the metric's score of the copy_reference baseline; required by order"},
		{Name: "target_oracle", Kind: stages.Input, Required: true, Accepts: sanityScores, Doc: "the metric's score of the target_oracle baseline"},
		{Name: "tie", Kind: stages.Number, Default: 0.5, Doc: "tie: the value a tie with the target gives (the Insight Score: 0.5)"},
		{Name: "tolerance", Kind: stages.Number, Default: 0.1, Doc: "tie: the largest distance from tie that passes"},
	}
}

func (sanityType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	check := p.String("check")
	if err := oneOf("check", check, "order", "tie"); err != nil {
		return nil, err
	}
	names := []string{"target_oracle"}
	if check == "order" {
		names = []string{"shuffled_words", "copy_reference", "target_oracle"}
	}
	var deps []stages.Dep
	declared := stages.Read(sanityType{}, p) // names from a list the source check cannot see
	for _, name := range names {
		u := declared.Input(name)
		if u == nil {
			return nil, stages.ParamErrorf(name, "check = %q needs %s", check, name)
		}
		if len(u.Nodes) != 1 || u.Nodes[0].Item != "" {
			return nil, stages.ParamErrorf(name, "%s (%s) has %d nodes; it must be one score instance (index it: stage.x.y[\"key\"])", name, u.Address, len(u.Nodes))
		}
		deps = append(deps, stages.Dep{Input: name, Index: 0})
	}
	tie, tol := p.Number("tie"), p.Number("tolerance")
	if tol < 0 || math.IsNaN(tol) {
		return nil, stages.ParamErrorf("tolerance", "tolerance = %v must not be negative", tol)
	}
	return []stages.Node{{Deps: deps, Prepare: func(in []stages.In) (*stages.Work, error) {
		return &stages.Work{Compute: func() ([]byte, error) {
			v := map[string]float64{}
			for _, x := range in {
				var s stages.Score
				if err := json.Unmarshal(x.Output, &s); err != nil {
					return nil, fmt.Errorf("decode %s: %w", x.Input, err)
				}
				if s.Count == 0 {
					return nil, fmt.Errorf("%s (%s) scored no target; a sanity check needs a value", x.Input, x.From.Address)
				}
				v[x.Input] = s.Value
			}
			return stages.EncodeOutput(Sanity(check, v, tie, tol))
		}}, nil
	}}}, nil
}

// Sanity applies check to the baselines' values (keyed by param name).
func Sanity(check string, v map[string]float64, tie, tol float64) *stages.Score {
	s := &stages.Score{Count: len(v), Extra: map[string]float64{}}
	for k, x := range v {
		s.Extra[k] = x
	}
	pass := false
	if check == "order" {
		pass = v["shuffled_words"] < v["copy_reference"] && v["copy_reference"] < v["target_oracle"]
	} else {
		s.Extra["distance"] = math.Abs(v["target_oracle"] - tie)
		pass = s.Extra["distance"] <= tol
	}
	if pass {
		s.Value = 1
	} else {
		s.Extra["failed"] = 1
	}
	return s
}
