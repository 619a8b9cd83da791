package scholareval

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/format"
)

// TestCoverageRequestIsTheAuthors: the default prompt and system message
// render, for a plan, a review and a statement, the very messages
// ScholarEval's coverage.py has prometheus-eval send (testdata, computed
// from their sources with Python's str.format), and the default sampling
// is prometheus-eval's whatever the judge model block says.
func TestCoverageRequestIsTheAuthors(t *testing.T) {
	raw, err := os.ReadFile("testdata/coverage_request.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Plan, Review, Statement, System, User string }
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	data := coverageData{Plan: want.Plan, Review: want.Review, Statement: want.Statement, Type: "weakness", Axis: "contribution", Severity: "major"}
	user, err := stages.RenderParam("prompt", "p", DefaultCoveragePrompt, data)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	judge := &stages.Model{Name: "openai/gpt-4o", Temperature: &zero, MaxTokens: 300}
	req := judgeRequest(judge, DefaultCoverageSystem, user, true, SamplingPrometheus)
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[0].Content != want.System ||
		req.Messages[1].Role != "user" || req.Messages[1].Content != want.User {
		t.Fatalf("messages differ from the authors':\n%+v\nwant system %q\nuser %q", req.Messages, want.System, want.User)
	}
	if req.Temperature == nil || *req.Temperature != 1.0 || req.TopP == nil || *req.TopP != 0.9 || req.MaxTokens != 1024 || req.Format.Kind != format.Text {
		t.Errorf("sampling %v %v %d, format %q; want prometheus-eval's 1.0, 0.9, 1024 and free text", req.Temperature, req.TopP, req.MaxTokens, req.Format.Kind)
	}
	// sampling = "model": the block's own; prometheus = false: the rating
	// instructions follow the prompt; no system message when it is "".
	req = judgeRequest(judge, "", user, false, SamplingModel)
	if len(req.Messages) != 1 || req.Temperature == nil || *req.Temperature != 0 || req.TopP != nil || req.MaxTokens != 300 ||
		req.Format.Kind != format.Rating || req.Messages[0].Content != stages.UserMessage(user, req.Format) {
		t.Errorf("model sampling, rating format: %+v", req)
	}
}

// TestCoverageParsesBothWays: over the golden answer shapes, the strict
// parse reads what the file says, and the authors' parse stored beside it
// is what prometheus-eval's parser reads from the same answer.
func TestCoverageParsesBothWays(t *testing.T) {
	raw, err := os.ReadFile("../format/testdata/prometheus_compat.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Shape, Answer   string
			Strict, Authors *int
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, c := range doc.Cases {
		a, err := format.Parse(format.Spec{Kind: format.Text}, c.Answer)
		if err != nil {
			t.Fatal(err)
		}
		score, _, err := ParseResult(a.Text)
		if c.Strict == nil {
			if err == nil {
				t.Errorf("%s: strict parse read %d; the file says it fails", c.Shape, score)
			}
			continue
		}
		if err != nil || score != *c.Strict {
			t.Errorf("%s: strict parse %d (%v); want %d", c.Shape, score, err, *c.Strict)
			continue
		}
		p := authorsParse(a.Text)
		if p.Parser != format.CompatPrometheusParser || (p.Score == nil) != (c.Authors == nil) || p.Score != nil && *p.Score != *c.Authors {
			t.Errorf("%s: authors_parse %+v; want %v", c.Shape, p, c.Authors)
		}
		if p.Score == nil || *p.Score != score {
			differ++
		}
	}
	// Of the 19 answers the strict parse reads, the authors' parser reads 6
	// otherwise: nothing for a trailing full stop, bold, feedback after the
	// score, a remark after it or the bare number; 3 for the restated score.
	if differ != 6 {
		t.Errorf("%d answers read differently; want 6", differ)
	}
}

// coverage_score puts the authors' reading beside the strict mean: over
// the golden answer shapes the strict parse reads, the authors' parser
// reads 14 (one of them 3 where the strict parse reads 4) and none of 5.
func TestCoverageScoreAuthorsMean(t *testing.T) {
	raw, err := os.ReadFile("../format/testdata/prometheus_compat.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []struct{ Answer string } }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var judged, records []stages.In
	var rubric []datasets.RubricLine
	strictSum, authorsSum, authorsRead := 0, 0, 0
	for _, c := range doc.Cases {
		a, _ := format.Parse(format.Spec{Kind: format.Text}, c.Answer)
		score, feedback, err := ParseResult(a.Text)
		if err != nil {
			continue // the judgment fails: no output
		}
		out := CoverageOutput{Idea: "ai_1", Index: len(rubric), Score: score, Feedback: feedback, AuthorsParse: authorsParse(a.Text)}
		b, _ := json.Marshal(out)
		judged = append(judged, stages.In{Node: stages.NodeInfo{Item: "ai_1", Slot: len(rubric) + 1}, Output: b})
		rubric = append(rubric, datasets.RubricLine{Statement: "s", Type: "weakness", Axis: "soundness", Severity: "major"})
		strictSum += score
		if out.AuthorsParse.Score != nil {
			authorsSum += *out.AuthorsParse.Score
			authorsRead++
		}
	}
	rec, _ := json.Marshal(idea{ID: "ai_1", Domain: "ai", Idea: "i", Rubric: rubric})
	records = append(records, stages.In{Node: stages.NodeInfo{Item: "ai_1"}, Output: rec})
	b, err := coverageScore(groups([]string{"ai_1"})[0], judged, records, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s stages.Score
	json.Unmarshal(b, &s)
	if len(judged) != 19 || authorsRead != 14 || s.Value != float64(strictSum)/19 || s.Extra["authors"] != float64(authorsSum)/14 || s.Extra["authors_unread"] != 5 {
		t.Errorf("%d judged, authors read %d: %+v", len(judged), authorsRead, s)
	}
	t.Logf("strict mean %.3f over 19; the authors' parser %.3f over 14", s.Value, s.Extra["authors"])
}

// coverage_score's groups param: the kinds selected, each known, at least one.
func TestCoverageScoreGroups(t *testing.T) {
	for _, tc := range []struct {
		groups []string
		want   string // selected kinds, or the error
	}{
		{groupKinds, "axis domain overall severity type"},
		{[]string{"overall", "domain"}, "domain overall"},
		{[]string{"severity"}, "severity"},
		{[]string{"overall", "discipline"}, `unknown group kind "discipline": use some of overall, domain, axis, type, severity`},
		{[]string{}, "groups is empty: give at least one of overall, domain, axis, type, severity"},
	} {
		got, err := selectedKinds(stages.Params{"groups": tc.groups})
		text := ""
		if err != nil {
			text = err.Error()
		} else {
			text = strings.Join(slices.Sorted(maps.Keys(got)), " ")
		}
		if text != tc.want {
			t.Errorf("groups %v: got %q, want %q", tc.groups, text, tc.want)
		}
	}
	for name, kind := range map[string]string{"overall": "overall", "domain=ai": "domain", "severity=minor": "severity"} {
		if kindOf(name) != kind {
			t.Errorf("kindOf(%q) = %q", name, kindOf(name))
		}
	}
}
