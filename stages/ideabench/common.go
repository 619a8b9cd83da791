package ideabench

import (
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

func init() {
	stages.Register(filterType{})
	stages.Register(generateType{})
	stages.Register(rankType{})
	stages.Register(insightType{})
	stages.Register(similarityType{})
	stages.Register(similarityScoreType{})
	stages.Register(extractType{})
	stages.Register(overlapType{})
	stages.Register(overlapScoreType{})
	stages.Register(bestType{})
	stages.Register(positionType{})
	stages.Register(sanityType{})
}

// Errors about one parameter are *stages.ParamError, so the engine can point
// at that attribute in the experiment file.

func oneOf(param, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return stages.ParamErrorf(param, "%s = %q is not one of %s", param, value, quoteAll(allowed))
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// dropped returns the Compute of a dropped target's node: b, whatever the
// params. It is keyed only on keyParams, the param naming what the node
// stands for (a generator, a set of ideas), so it stays cached when n or the
// judge's sampling changes, yet each generator still has nodes of its own.
func dropped(b []byte, keyParams ...string) *stages.Work {
	return &stages.Work{Compute: func() ([]byte, error) { return b, nil }, KeyParams: keyParams}
}

// summaryParam chooses what a per-target summary stage reports as its Score
// Value; the other two stay in Extra. The paper's Table 1 reports the 80th
// percentile of similarity and overlap, its Table 2 the mean.
var summaryParam = stages.Param{Name: "summary", Kind: stages.String, Default: "mean",
	Doc: `the Score's value: "mean", "median" or "p80" (the paper's Table 1: the 80th percentile, linear interpolation); all three are in the score's extra values`}

func summaryOf(p stages.Params) (string, error) {
	s := p.String("summary")
	return s, oneOf("summary", s, "mean", "median", "p80")
}

// summarise records the mean in Extra and moves the chosen summary into
// Value. A score with nothing counted keeps Value 0 and no summaries.
func summarise(s *stages.Score, summary string) *stages.Score {
	if s.Count == 0 {
		return s
	}
	s.Extra["mean"] = s.Value
	s.Value = s.Extra[summary]
	return s
}
