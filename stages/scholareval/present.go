package scholareval

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// How ScholarEval's outputs read (stages.Presenter). ScholarEval judges
// ideas it is given: the page shows each item's idea once (the extraction
// stages copy it: Given), and as its judgements the reviews (soundness,
// contribution, the plain-LLM baseline: kind, score, text), the coverage
// judge's score of each rubric line, and the pairwise preference's winners.
// The steps in between rate papers and methods, not the idea (relevance,
// comparisons, per-method syntheses): exported, not shown as judgements.
// Every type exports its default row.

// givenIdea presents the idea an extraction stage copies as given.
func givenIdea(t stages.Type, out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	var o struct {
		Idea string `json:"idea"`
	}
	pr.Ideas, pr.Judgements = nil, nil
	if json.Unmarshal(out.Output, &o) == nil && strings.TrimSpace(o.Idea) != "" {
		pr.Ideas = []stages.Idea{{Text: o.Idea, Given: true}}
	}
	return pr, nil
}

// rowsOnly presents a step's output as export rows alone.
func rowsOnly(t stages.Type, out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	pr.Ideas, pr.Judgements = nil, nil
	return pr, nil
}

func (t methodsType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return givenIdea(t, out)
}

func (t dimensionsType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return givenIdea(t, out)
}

func (t relevanceType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return rowsOnly(t, out)
}

func (t compareType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return rowsOnly(t, out)
}

func (t synthesisType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return rowsOnly(t, out)
}

// review presents a Review as a judgement of the idea: its kind, its score
// when it has one, its text.
func review(t stages.Type, out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	var r Review
	if err := json.Unmarshal(out.Output, &r); err != nil {
		return nil, fmt.Errorf("decode review: %w", err)
	}
	pr.Ideas = nil
	dim := r.Kind + " review"
	if r.Kind == "llm" {
		dim = "plain-LLM review"
	}
	pr.Judgements = []stages.Judgement{{Judge: out.Model, Dimension: out.Block + " · " + dim, Score: r.Score, Rationale: r.Text}}
	return pr, nil
}

func (t soundnessType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return review(t, out)
}

func (t contributionType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return review(t, out)
}

func (t llmReviewType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	return review(t, out)
}

func (t coverageType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	var o CoverageOutput
	if err := json.Unmarshal(out.Output, &o); err != nil {
		return nil, fmt.Errorf("decode coverage output: %w", err)
	}
	score := float64(o.Score)
	pr.Ideas = nil
	pr.Judgements = []stages.Judgement{{Judge: out.Model, Score: &score, Rationale: o.Feedback,
		Dimension: fmt.Sprintf("%s · rubric line %d (%s, %s, %s): %s", out.Block, o.Index+1, o.Type, o.Axis, o.Severity, o.Statement)}}
	return pr, nil
}

func (t preferenceType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	var o PreferenceOutput
	if err := json.Unmarshal(out.Output, &o); err != nil {
		return nil, fmt.Errorf("decode pairwise_preference output: %w", err)
	}
	criteria := make([]string, 0, len(o.Winners))
	for c := range o.Winners {
		criteria = append(criteria, c)
	}
	sort.Strings(criteria)
	var verdict, why []string
	for _, c := range criteria {
		w := o.Winners[c]
		if w == "" {
			w = "unread"
		}
		verdict = append(verdict, c+": "+w)
		if r := o.Rationales[c]; r != "" {
			why = append(why, c+": "+r)
		}
	}
	pr.Ideas = nil
	pr.Judgements = []stages.Judgement{{Judge: out.Model, Dimension: out.Block + " · a vs b", Verdict: strings.Join(verdict, ", "), Rationale: strings.Join(why, "\n")}}
	return pr, nil
}
