package format

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// prometheusCase is one answer of testdata/prometheus_compat.json.
type prometheusCase struct {
	Shape   string `json:"shape"`
	Answer  string `json:"answer"`
	Strict  *int   `json:"strict"`
	Authors *int   `json:"authors"`
}

func loadPrometheusCases(t *testing.T) []prometheusCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/prometheus_compat.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []prometheusCase }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Cases
}

// TestCompatPrometheusAbsolute reads every answer shape of the golden file
// as prometheus-eval's parser read it: the score, and the whole stripped
// answer as the feedback.
func TestCompatPrometheusAbsolute(t *testing.T) {
	cases := loadPrometheusCases(t)
	if len(cases) < 10 {
		t.Fatalf("%d shapes; the golden file must hold at least 10", len(cases))
	}
	read := 0
	for _, c := range cases {
		score, feedback, ok := CompatPrometheusAbsolute(c.Answer)
		switch {
		case c.Authors == nil && ok:
			t.Errorf("%s: read %d; the authors' parser reads nothing", c.Shape, score)
		case c.Authors != nil && (!ok || score != *c.Authors):
			t.Errorf("%s: read %d (%v); the authors' parser reads %d", c.Shape, score, ok, *c.Authors)
		case ok && feedback != strings.TrimSpace(c.Answer):
			t.Errorf("%s: feedback %q; the authors' parser returns the whole answer", c.Shape, feedback)
		}
		if ok {
			read++
		}
	}
	if read != 16 {
		t.Errorf("%d of %d answers read; the golden file has 16", read, len(cases))
	}
}

// Python's whitespace, not Go's: str.strip and \s take the separators
// \x1c-\x1f and Unicode spaces; Go's unicode.IsSpace leaves out \x1c-\x1f.
func TestCompatPrometheusPythonSpaces(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   int
	}{
		{"Good.\x1e[RESULT]\u3000\u20034\x1f", 4},
		{"Good. [RESULT]\u00a0(\u20025)", 5},
		{"Good. score\u2009of\u20093", 3},
		{"Good. [RESULT] \u0664", 4},     // Arabic-Indic four: \d is any decimal digit in Python
		{"Good. [RESULT] \U0001D7DC", 4}, // mathematical double-struck four
	} {
		if got, _, ok := CompatPrometheusAbsolute(tc.answer); !ok || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.answer, got, ok, tc.want)
		}
	}
	for _, answer := range []string{
		"Good. [RESULT] 4\u200b",              // a zero-width space is not whitespace in Python: the score is not at the end
		"Good. [RESULT]\u00a0(\u20025\u2002)", // a space inside the closing parenthesis
	} {
		if got, _, ok := CompatPrometheusAbsolute(answer); ok {
			t.Errorf("%q: read %d; Python's parser reads nothing", answer, got)
		}
	}
}

// TestCompatScholarEvalPreference reads every pairwise-judge answer of the
// golden file as the authors' code does.
func TestCompatScholarEvalPreference(t *testing.T) {
	raw, err := os.ReadFile("testdata/preference_compat.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Shape, Answer string
			Authors       map[string]string
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 10 {
		t.Fatalf("%d shapes; the golden file must hold at least 10", len(doc.Cases))
	}
	unread := 0
	for _, c := range doc.Cases {
		got, ok := CompatScholarEvalPreference(c.Answer)
		if c.Authors == nil {
			unread++
			if ok {
				t.Errorf("%s: read %v; the authors' code reads nothing", c.Shape, got)
			}
			continue
		}
		if !ok || fmt.Sprint(got) != fmt.Sprint(c.Authors) {
			t.Errorf("%s: read %v (%v); the authors' code reads %v", c.Shape, got, ok, c.Authors)
		}
	}
	if unread != 6 {
		t.Errorf("%d answers unread; the golden file has 6", unread)
	}
	// Extra data after the object is json.loads' error, not a reading.
	if got, ok := CompatScholarEvalPreference(`{"Evidence-based-rationale": "", "Evidence-based-winner": "A", "Actionability-rationale": "", "Actionability-winner": "A", "Depth-rationale": "", "Depth-winner": "A"}}`); ok {
		t.Errorf("extra data: read %v", got)
	}
}
