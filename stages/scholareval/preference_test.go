package scholareval

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// TestPreferenceRequestIsTheAuthors: the default prompts render, for two
// reports, the messages llm_metrics.py sends (testdata, evaluated from its
// source with Python).
func TestPreferenceRequestIsTheAuthors(t *testing.T) {
	raw, err := os.ReadFile("testdata/preference_request.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		ReportA string `json:"report_a"`
		ReportB string `json:"report_b"`
		System  string `json:"system"`
		User    string `json:"user"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	data := preferenceData{want.ReportA, want.ReportB}
	user, err := stages.RenderParam("prompt", "p", DefaultPreferencePrompt, data)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := stages.RenderParam("system", "s", DefaultPreferenceSystem, data)
	if err != nil {
		t.Fatal(err)
	}
	if user != want.User || sys != want.System {
		t.Errorf("messages differ from the authors':\n%q\n%q\nwant\n%q\n%q", sys, user, want.System, want.User)
	}
}

// TestParsePreferenceBothWays: the strict parse of every golden answer
// shape, and the authors' reading stored beside it with the swap undone.
func TestParsePreferenceBothWays(t *testing.T) {
	raw, err := os.ReadFile("../format/testdata/preference_compat.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Shape, Answer   string
			Strict, Authors map[string]string
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, c := range doc.Cases {
		winners, _, err := ParsePreference(c.Answer)
		if c.Strict == nil {
			if err == nil {
				t.Errorf("%s: strict parse read %v; the file says it fails", c.Shape, winners)
			}
			continue
		}
		if err != nil || fmt.Sprint(winners) != fmt.Sprint(c.Strict) {
			t.Errorf("%s: strict parse %v (%v); want %v", c.Shape, winners, err, c.Strict)
			continue
		}
		// Swapped: Report A was system b.
		out, err := preference("i", c.Answer, true)
		if err != nil {
			t.Fatal(err)
		}
		toSystem := map[string]string{"A": "b", "B": "a", "TIE": "tie", "UNCLEAR": "unclear", "": ""}
		for _, crit := range format.PreferenceCriteria {
			if out.Winners[crit] != toSystem[c.Strict[crit]] {
				t.Errorf("%s %s: winner %q from %q swapped", c.Shape, crit, out.Winners[crit], c.Strict[crit])
			}
			authors := "UNCLEAR"
			if c.Authors != nil {
				authors = c.Authors[crit]
			}
			if out.AuthorsParse.Winners[crit] != toSystem[authors] {
				t.Errorf("%s %s: authors_parse %q; the authors' code reads %q", c.Shape, crit, out.AuthorsParse.Winners[crit], authors)
			}
			if toSystem[c.Strict[crit]] != toSystem[authors] {
				differ++
			}
		}
		if out.AuthorsParse.Parser != format.CompatPreferenceParser || !out.Swapped {
			t.Errorf("%s: %+v", c.Shape, out)
		}
	}
	// Of the 54 criteria of the 18 answers the strict parse reads, the
	// authors' code records 21 otherwise: every criterion of the 5 answers
	// it cannot read at all (prose before the fence, "```JSON", an untagged
	// fence, a raw newline, a missing winner: 15, UNCLEAR); A for "B
	// (marginally)", "Both are equal" and "Report A is better" and UNCLEAR
	// for "Neither" and null, which the strict parse leaves unread; and
	// UNCLEAR for "\u0041", which it reads as A.
	if differ != 21 {
		t.Errorf("%d criteria read differently; want 21", differ)
	}
}

func prefIn(t *testing.T, item string, winners, authors map[string]string) stages.In {
	t.Helper()
	b, err := json.Marshal(PreferenceOutput{Idea: item, Winners: winners, AuthorsParse: &PreferenceAuthorsParse{Winners: authors}})
	if err != nil {
		t.Fatal(err)
	}
	return stages.In{Node: stages.NodeInfo{Item: item}, Output: b}
}

// preference_score by hand: five pairs, one failed; evidence read a, a, b,
// unreadable; the authors read a, a, b, unclear.
func TestPreferenceScore(t *testing.T) {
	w := func(e string) map[string]string { return map[string]string{"Evidence-based": e} }
	in := []stages.In{
		prefIn(t, "i1", w("a"), w("a")), prefIn(t, "i2", w("a"), w("a")), prefIn(t, "i3", w("b"), w("b")),
		prefIn(t, "i4", w(""), w("unclear")), {Node: stages.NodeInfo{Item: "i5"}},
	}
	for _, tc := range []struct {
		outcome        string
		value, authors float64
	}{{"a", 200.0 / 3, 50}, {"b", 100.0 / 3, 25}, {"tie", 0, 0}} {
		b, err := preferenceScore("Evidence-based", tc.outcome, in)
		if err != nil {
			t.Fatal(err)
		}
		var s stages.Score
		json.Unmarshal(b, &s)
		if s.Value != tc.value || s.Count != 3 || s.Missing != 2 || s.Extra["authors"] != tc.authors || s.Extra["authors_unclear"] != 1 {
			t.Errorf("%s: %+v", tc.outcome, s)
		}
	}
}

// reference_invalidity by hand: ai_1's reviews cite c1, c2 and zz (not
// retrieved); ai_2's cites c1; the baseline's titles: T1 matched, T2 not
// (ai_1), T3 not (ai_2).
func TestInvalidityScore(t *testing.T) {
	review := func(item, kind string, cited, unretrieved []string) stages.In {
		b, _ := json.Marshal(Review{Kind: kind, Citations: Citations{Cited: cited, Unretrieved: unretrieved}})
		return stages.In{Node: stages.NodeInfo{Item: item}, Output: b}
	}
	se := []stages.In{review("ai_1", "soundness", []string{"c1", "zz"}, []string{"zz"}), review("ai_1", "contribution", []string{"c1", "c2"}, []string{}),
		review("ai_2", "soundness", []string{"c1"}, []string{}), {Node: stages.NodeInfo{Item: "ai_3"}}}
	b, err := invalidityScore(se, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s stages.Score
	json.Unmarshal(b, &s)
	if s.Value != 25 || s.Count != 4 || s.Missing != 1 || s.PerItem["ai_1"] != 100.0/3 || s.Extra["mean_per_review"] != 50.0/3 || s.Extra["invalid"] != 1 {
		t.Errorf("retrieval reviews: %+v", s)
	}
	resolved := func(item, title string, found bool) stages.In {
		r := ResolveOutput{Title: title}
		if found {
			r.Paper = &Paper{ID: "p"}
		}
		b, _ := json.Marshal(r)
		return stages.In{Node: stages.NodeInfo{Item: item}, Output: b}
	}
	b, err = invalidityScore([]stages.In{review("ai_1", "llm", []string{"1"}, []string{"1"})},
		[]stages.In{resolved("ai_1", "T1", true), resolved("ai_1", "T2", false), resolved("ai_2", "T3", false)})
	if err != nil {
		t.Fatal(err)
	}
	s = stages.Score{}
	json.Unmarshal(b, &s)
	if s.Value != 200.0/3 || s.Count != 3 || s.Extra["mean_per_review"] != 75 {
		t.Errorf("plain-LLM reviews: %+v", s)
	}
}
