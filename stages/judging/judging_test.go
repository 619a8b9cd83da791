package judging

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func model(name, family string) *stages.Model {
	return &stages.Model{Address: "model." + strings.NewReplacer("/", "_", "-", "_", ".", "_").Replace(name), Name: name, Family: family}
}

// panel10 is a ten-judge panel with three families of two or more.
func panel10() []*stages.Model {
	return []*stages.Model{
		model("openai/gpt-4o", "openai"), model("openai/o1-mini", "openai"),
		model("anthropic/claude-3.5-sonnet", "anthropic"), model("anthropic/claude-3.5-haiku", "anthropic"),
		model("google/gemini-pro-1.5", "google"), model("google/gemini-2.0-flash-exp", "google"),
		model("qwen/qwq-32b-preview", "qwen"), model("meta-llama/llama-3.1-405b-instruct", "meta"),
		model("mistralai/mistral-large-2411", "mistral"), model("deepseek/deepseek-chat", "deepseek"),
	}
}

func names(ms []*stages.Model) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = Key(fmt.Sprintf("kw%04d", i), fmt.Sprint(i%2))
	}
	return out
}

func TestDrawNeverGeneratorNorFamilyExactlyK(t *testing.T) {
	panel := panel10()
	for _, gen := range []*stages.Model{
		model("openai/gpt-4o", "openai"),              // in the panel, family of two
		model("anthropic/claude-3-opus", "anthropic"), // not in the panel, family in it
		model("qwen/qwq-32b-preview", ""),             // in the panel, no family given: only itself
		model("x-ai/grok-2-1212", "xai"),              // unrelated
	} {
		eligible := Eligible(panel, gen, ExcludeFamily)
		for _, k := range []int{1, 3, len(eligible)} {
			for _, key := range keys(500) {
				d := Draw(7, key, eligible, k)
				if len(d) != k {
					t.Fatalf("%s k=%d: drew %d judges", gen.Name, k, len(d))
				}
				seen := map[string]bool{}
				for _, j := range d {
					if seen[j.Name] {
						t.Fatalf("%s: %s drawn twice in %v", gen.Name, j.Name, names(d))
					}
					seen[j.Name] = true
					if j.Name == gen.Name {
						t.Fatalf("%s judged by itself", gen.Name)
					}
					if gen.Family != "" && j.Family == gen.Family {
						t.Fatalf("%s judged by %s of its family %s", gen.Name, j.Name, gen.Family)
					}
				}
			}
		}
	}
	// How many remain: 10 - 2 for openai, 10 - 2 for anthropic (not in the
	// panel), 10 - 1 for qwq without family, 10 for grok.
	for gen, want := range map[*stages.Model]int{
		model("openai/gpt-4o", "openai"): 8, model("anthropic/claude-3-opus", "anthropic"): 8,
		model("qwen/qwq-32b-preview", ""): 9, model("x-ai/grok-2-1212", "xai"): 10,
	} {
		if got := len(Eligible(panel, gen, ExcludeFamily)); got != want {
			t.Errorf("%s: %d eligible, want %d", gen.Name, got, want)
		}
	}
}

// The exclusions, judge by judge: the authors' rule keeps out the
// generator by its exact name only, so a model of its family, or a
// variant under another name, judges it; the family rule keeps them all
// out; none keeps out nobody.
func TestExcludedByRule(t *testing.T) {
	gen := model("openai/gpt-4o", "openai")
	for _, tc := range []struct {
		judge               *stages.Model
		model, family, none bool
	}{
		{judge: model("openai/gpt-4o", "openai"), model: true, family: true},
		{judge: model("openai/gpt-4o", ""), model: true, family: true}, // the name decides, whatever the family says
		{judge: model("openai/o1-mini", "openai"), family: true},
		{judge: model("openai/gpt-4o:free", "openai"), family: true}, // another name is another model
		{judge: model("google/gemini-pro-1.5", "google")},
	} {
		for ex, want := range map[Exclusion]bool{ExcludeModel: tc.model, ExcludeFamily: tc.family, ExcludeNone: tc.none} {
			if got, why := Excluded(tc.judge, gen, ex); got != want || (got && why == "") {
				t.Errorf("%s under %s: excluded %v (%q), want %v", tc.judge.Name, ex, got, why, want)
			}
		}
	}
	if ex, err := ParseExclusion("exclude", "families"); err == nil || !strings.Contains(err.Error(), `"model"`) {
		t.Errorf("ParseExclusion(families) = %q, %v", ex, err)
	}
}

// A draw is a uniform random k of the eligible judges, as the authors'
// random.sample draws them: over 9,000 keys each of 9 judges is drawn in
// about a third of the draws, and each of the 84 possible panels of 3
// about 1/84 of the time (bounds far outside sampling noise: a biased
// draw, such as one that favoured the panel's first judges, fails).
func TestDrawIsUniform(t *testing.T) {
	panel := Eligible(panel10(), model("openai/gpt-4o", "openai"), ExcludeModel)
	if len(panel) != 9 {
		t.Fatalf("%d eligible", len(panel))
	}
	const n = 9000
	perJudge := map[string]int{}
	perSet := map[string]int{}
	for _, key := range keys(n) {
		d := names(Draw(5, key, panel, 3))
		for _, j := range d {
			perJudge[j]++
		}
		sorted := append([]string(nil), d...)
		for i := range sorted {
			for j := i + 1; j < len(sorted); j++ {
				if sorted[j] < sorted[i] {
					sorted[i], sorted[j] = sorted[j], sorted[i]
				}
			}
		}
		perSet[strings.Join(sorted, ",")]++
	}
	for j, c := range perJudge {
		if c < n/3-300 || c > n/3+300 {
			t.Errorf("%s drawn %d times of %d, want about %d", j, c, n, n/3)
		}
	}
	if len(perSet) != 84 {
		t.Errorf("%d distinct panels of 3, want all 84", len(perSet))
	}
	for set, c := range perSet {
		if c < n/84/3 || c > n/84*3 {
			t.Errorf("panel %s drawn %d times, want about %d", set, c, n/84)
		}
	}
}

func TestDrawSameSeedSamePanelAnyOrder(t *testing.T) {
	panel := panel10()
	reversed := make([]*stages.Model, len(panel))
	for i, m := range panel {
		reversed[len(panel)-1-i] = m
	}
	differs := 0
	for _, key := range keys(300) {
		a, b := names(Draw(3, key, panel, 3)), names(Draw(3, key, reversed, 3))
		if strings.Join(a, ",") != strings.Join(b, ",") {
			t.Fatalf("%q: panel order changed the draw: %v vs %v", key, a, b)
		}
		if strings.Join(a, ",") != strings.Join(names(Draw(4, key, panel, 3)), ",") {
			differs++
		}
	}
	// Another seed is another draw (not a constant function of the key).
	if differs < 200 {
		t.Errorf("seed 3 and 4 agree on %d of 300 draws", 300-differs)
	}
}

// The property in the package doc, exactly: with judge J added, a draw
// that does not contain J is the old draw; a draw that does is the old draw
// with its last (lowest-weight) judge replaced by J. Removing J restores
// every draw.
func TestGrownPanelKeepsDraws(t *testing.T) {
	panel := panel10()
	newJudge := model("amazon/nova-pro-v1", "amazon")
	grown := append(append([]*stages.Model{}, panel...), newJudge)
	const k = 3
	picks := 0
	for _, key := range keys(2000) {
		old := names(Draw(11, key, panel, k))
		now := names(Draw(11, key, grown, k))
		at := -1
		for i, n := range now {
			if n == newJudge.Name {
				at = i
			}
		}
		if at < 0 {
			if strings.Join(old, ",") != strings.Join(now, ",") {
				t.Fatalf("%q: draw changed without picking the new judge: %v -> %v", key, old, now)
			}
			continue
		}
		picks++
		var rest []string
		for i, n := range now {
			if i != at {
				rest = append(rest, n)
			}
		}
		if strings.Join(rest, ",") != strings.Join(old[:k-1], ",") {
			t.Fatalf("%q: %v -> %v: the new judge must replace exactly the old last judge %s", key, old, now, old[k-1])
		}
	}
	// A fair draw picks the new judge in about k/11 of the draws.
	if picks < 2000*k/11/2 || picks > 2000*k/11*2 {
		t.Errorf("the new judge was picked in %d of 2000 draws; expected about %d", picks, 2000*k/11)
	}
	// Raising k keeps the judges drawn before.
	for _, key := range keys(200) {
		three, four := names(Draw(11, key, panel, 3)), names(Draw(11, key, panel, 4))
		if strings.Join(three, ",") != strings.Join(four[:3], ",") {
			t.Fatalf("%q: k=4 draw %v does not extend k=3 draw %v", key, four, three)
		}
	}
}

func TestCheck(t *testing.T) {
	panel := []*stages.Model{model("openai/gpt-4o", "openai"), model("openai/o1-mini", "openai"), model("google/gemini-pro-1.5", "google"), model("qwen/qwq", "qwen")}
	cases := []struct {
		name   string
		panel  []*stages.Model
		gen    *stages.Model
		k      int
		ex     Exclusion
		param  string
		errSub string
	}{
		{name: "enough", panel: panel, gen: model("x/y", "x"), k: 3},
		{name: "enough after exclusion", panel: panel, gen: model("google/gemini-pro-1.5", "google"), k: 3},
		{name: "family leaves two", panel: panel, gen: model("openai/gpt-4o", "openai"), k: 3, ex: ExcludeFamily, param: "panel",
			errSub: "panel has 2 judge(s) for the ideas of openai/gpt-4o, fewer than judges_per_idea = 3 (excluded: model.openai_gpt_4o is the generator; model.openai_o1_mini is of the generator's family \"openai\"); add judges of other families to panel or lower judges_per_idea"},
		{name: "model exclusion leaves three", panel: panel, gen: model("openai/gpt-4o", "openai"), k: 3},
		{name: "model exclusion leaves three, k 4", panel: panel, gen: model("openai/gpt-4o", "openai"), k: 4, param: "panel",
			errSub: "panel has 3 judge(s) for the ideas of openai/gpt-4o, fewer than judges_per_idea = 4 (excluded: model.openai_gpt_4o is the generator); add judges to panel or lower judges_per_idea"},
		{name: "no exclusion keeps the generator", panel: panel, gen: model("openai/gpt-4o", "openai"), k: 4, ex: ExcludeNone},
		{name: "no generator", panel: panel, k: 4},
		{name: "no generator, too few", panel: panel, k: 5, param: "panel", errSub: "panel has 4 judge(s) for the ideas, fewer than judges_per_idea = 5; add judges"},
		{name: "empty", panel: nil, k: 1, param: "panel", errSub: "panel is empty"},
		{name: "duplicate name", panel: append([]*stages.Model{panel[0]}, panel...), k: 1, param: "panel", errSub: `lists model name "openai/gpt-4o" twice`},
		{name: "zero k", panel: panel, k: 0, param: "judges_per_idea", errSub: "draw at least one judge"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := tc.ex
			if ex == "" {
				ex = ExcludeModel
			}
			err := Check("panel", "judges_per_idea", tc.panel, tc.gen, tc.k, ex)
			if tc.errSub == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *stages.ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param {
				t.Fatalf("error %v is not a ParamError on %s", err, tc.param)
			}
			if !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error %q lacks %q", err, tc.errSub)
			}
		})
	}
}

// The weights are pinned: a change would silently redraw every panel of
// every cached experiment.
func TestWeightPinned(t *testing.T) {
	if got := Weight(0, Key("kw1", "0"), "openai/gpt-4o"); got != pinnedWeight {
		t.Errorf("Weight = %d, pinned %d", got, pinnedWeight)
	}
}

// pinnedWeight: printf '0\0kw1\0000\0openai/gpt-4o' | sha256sum, first 16 hex digits.
const pinnedWeight uint64 = 17779013089676546868
