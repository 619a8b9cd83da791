package format

import (
	"encoding/json"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// The IdeaBench compatibility parses against golden vectors: crafted judge
// answers (testdata/compat_ideabench_*.json) with what the authors' code at
// amir-hassan25/IdeaBench@9dbd125 reads from each, as Python 3.11 evaluates
// their regular expressions and splits (parse_rankings, update_ranking_list
// and get_relative_rank; evaluate and extract_llm_rating).

func TestIdeaBenchRankingGolden(t *testing.T) {
	var cases []struct {
		Name     string   `json:"name"`
		Answer   string   `json:"answer"`
		Letters  []string `json:"letters"`
		Relative *float64 `json:"relative_rank_of_A"`
	}
	readGolden(t, "testdata/compat_ideabench_ranking.json", &cases)
	if len(cases) < 10 {
		t.Fatalf("%d ranking shapes, want at least 10", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := IdeaBenchRanking(c.Answer)
			if !reflect.DeepEqual(got, c.Letters) {
				t.Errorf("letters %q, want %q", got, c.Letters)
			}
			rel, ok := IdeaBenchRelativeRank(got, "A")
			switch {
			case c.Relative == nil && ok:
				t.Errorf("relative rank %v, want none (A not read)", rel)
			case c.Relative != nil && (!ok || rel != *c.Relative):
				t.Errorf("relative rank %v (%v), want %v", rel, ok, *c.Relative)
			}
		})
	}
}

func TestIdeaBenchRatingGolden(t *testing.T) {
	var cases []struct {
		Name        string `json:"name"`
		Answer      string `json:"answer"`
		Rating      *int   `json:"rating"`
		Explanation string `json:"explanation"`
	}
	readGolden(t, "testdata/compat_ideabench_rating.json", &cases)
	if len(cases) < 10 {
		t.Fatalf("%d rating shapes, want at least 10", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			v, expl, ok := IdeaBenchRating(c.Answer)
			switch {
			case c.Rating == nil && ok:
				t.Errorf("rating %d, want none", v)
			case c.Rating != nil && (!ok || v != *c.Rating):
				t.Errorf("rating %d (%v), want %d", v, ok, *c.Rating)
			}
			if expl != c.Explanation {
				t.Errorf("explanation %q, want %q", expl, c.Explanation)
			}
		})
	}
}

// digitValue relies on every run of Unicode category Nd being whole blocks
// 0-9 with stride 1; a Unicode update that broke that would misread digits.
func TestDigitValueBlocks(t *testing.T) {
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (int(rg.Hi)-int(rg.Lo)+1)%10 != 0 {
			t.Errorf("Nd range %U-%U stride %d is not whole blocks of 10", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (int(rg.Hi)-int(rg.Lo)+1)%10 != 0 {
			t.Errorf("Nd range %U-%U stride %d is not whole blocks of 10", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	for r, want := range map[rune]int{'7': 7, '\uff18': 8, '\u0663': 3, '\U0001D7D9': 1} {
		if got := digitValue(r); got != want {
			t.Errorf("digitValue(%U) = %d, want %d", r, got, want)
		}
	}
	if v, ok := firstNumber("1234567890123456789"); ok {
		t.Errorf("a 19-digit number read as %d", v)
	}
}

func readGolden(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The mock's answers to IdeaBench's prompt: the strict parser reads every
// form as the drawn order; the authors' parser reads the plain and bold
// forms alike and repeats letters in the third.
func TestSynthHypothesisList(t *testing.T) {
	spec := Spec{Kind: Ranking, Letters: "ABCD", Style: StyleHypothesisList}
	forms := map[string]int{}
	for seed := int64(0); seed < 60; seed++ {
		text, want := synthesize(spec, rand.New(rand.NewSource(seed)), "tau")
		got, err := Parse(spec, text)
		if err != nil || !reflect.DeepEqual(got.Ranking, want.Ranking) {
			t.Fatalf("seed %d: %q parsed %v, %v; want %v", seed, text, got, err, want.Ranking)
		}
		authors := IdeaBenchRanking(text)
		switch {
		case reflect.DeepEqual(authors, want.Ranking):
			if strings.Contains(text, "**") {
				forms["bold"]++
			} else {
				forms["plain"]++
			}
		case len(authors) == 2*len(want.Ranking)-1:
			forms["repeats"]++
		default:
			t.Errorf("seed %d: the authors read %v from %q", seed, authors, text)
		}
	}
	if len(forms) != 3 {
		t.Errorf("forms drawn: %v, want all three", forms)
	}
}
