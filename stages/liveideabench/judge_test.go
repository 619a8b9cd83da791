package liveideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// golden and requestText are generate_test.go's.

// paperCritic is the authors' utils/prompts.json critic_prompt, verbatim.
const paperCritic = "You are an extremely demanding scientific reviewer with the highest critical standards, like those at Nature or Science. When evaluating scientific ideas, you will assess them on three key dimensions:\n\n1. originality: Novel contribution to unexplored areas or innovative approaches to existing problems \n2. feasibility: Technical implementation and practicality\n3. clarity: How well-articulated and easy to understand the idea is\n\nYour response should consist of two parts: a text analysis followed by a JSON score block.\n\nFirst, provide your brief analysis (less than 100 words) of the idea. Then, for each dimension, provide a score from 1 to 10 where 1-3 = poor, 4-6 = average, 7-10 = excellent.\n\nFor example:\n```json\n{\n    \"originality\": <score_1_to_10>,\n    \"feasibility\": <score_1_to_10>,\n    \"clarity\": <score_1_to_10>\n}```"

func model(name, family string) *stages.Model {
	return &stages.Model{Address: "model." + strings.NewReplacer("/", "_", "-", "_", ".", "_").Replace(name), Name: name, Family: family}
}

var testPanel = []*stages.Model{model("openai/gpt-4o", "openai"), model("openai/o1-mini", "openai"), model("google/gemini-pro-1.5", "google"),
	model("anthropic/claude-3.5-sonnet", "anthropic"), model("qwen/qwq-32b-preview", "qwen")}

// ideasUp is an upstream of items x samples ideas by gen.
func ideasUp(gen *stages.Model, items []string, samples int) *stages.Upstream {
	u := &stages.Upstream{Address: `stage.generate_from_keyword.g["` + gen.Name + `"]`, Key: gen.Name, Generator: gen}
	for _, it := range items {
		for s := 0; s < samples; s++ {
			u.Nodes = append(u.Nodes, stages.NodeInfo{Item: it, Slot: s})
		}
	}
	return u
}

func ideaIn(u *stages.Upstream, i int, idea Idea) stages.In {
	b, _ := json.Marshal(idea)
	return stages.In{Dep: stages.Dep{Input: "ideas", Index: i}, Node: u.Nodes[i], From: u, Output: b}
}

func TestDefaultJudgePromptIsThePapers(t *testing.T) {
	dims, err := dimensions(stages.WithDefaults(judgeType{}, stages.Params{}), releases["v2"])
	if err != nil {
		t.Fatal(err)
	}
	got, err := stages.Render("system", DefaultJudgeSystemPrompt, &JudgeSystemData{Dimensions: dims, Count: countWord(len(dims))})
	if err != nil {
		t.Fatal(err)
	}
	if got != paperCritic {
		t.Errorf("rendered default:\n%q\nthe paper's:\n%q", got, paperCritic)
	}
}

func TestJudgePanelLayoutAndRequest(t *testing.T) {
	gen := model("openai/gpt-4o-mini", "openai")
	up := ideasUp(gen, []string{"k1", "k2"}, 2)
	inst := &stages.Instance{Address: `stage.judge_panel.main["openai/gpt-4o-mini"]`,
		Params: stages.WithDefaults(judgeType{}, stages.Params{"ideas": up, "panel": testPanel, "seed": 5})}
	nodes, err := judgeType{}.Layout(inst)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 4*3 {
		t.Fatalf("%d nodes, want 12", len(nodes))
	}
	slots := map[string]bool{}
	for _, n := range nodes {
		key := fmt.Sprintf("%s/%d", n.Item, n.Slot)
		if slots[key] {
			t.Fatalf("two nodes at %s", key)
		}
		slots[key] = true
		if strings.HasSuffix(n.Label, " judge "+gen.Name) {
			t.Errorf("%s: the generator judges itself", n.Label)
		}
	}
	w, err := nodes[0].Prepare([]stages.In{ideaIn(up, 0, Idea{Keyword: "graphene", Domain: "Physics", Idea: "Use graphene membranes to filter salt."})})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "judge_request.txt", append([]byte(nodes[0].Label+"\n"), requestText(t, w.Call.Request)...))
	// The output holds the strict parse and, beside it, what the authors'
	// parser read from the same raw answer.
	out, err := w.Call.Output(&format.Answer{Fields: map[string]int{"originality": 7, "feasibility": 5, "clarity": 6}, Explanation: "Bold.",
		Raw: "Bold.\n```json\n{\"originality\": 7, \"feasibility\": 5, \"clarity\": 6}\n```"})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"judge":"`+w.Call.Model.Name+`","scores":{"clarity":6,"feasibility":5,"originality":7},"mean":6,"reasoning":"Bold.",`+
		`"authors_parse":{"scores":{"clarity":6,"feasibility":5,"originality":7},"mean":6,"valid":true,"parser":"`+format.ParserLiveIdeaBenchScoresV2+`"}}` {
		t.Errorf("output %s", out)
	}
	if !reflect.DeepEqual(w.Call.KeyParams, []string{"protocol"}) {
		t.Errorf("key params %v: the authors' parser depends on the protocol", w.Call.KeyParams)
	}
	// A dropped idea gives a dropped judgement without a call.
	w, err = nodes[0].Prepare([]stages.In{ideaIn(up, 0, Idea{Keyword: "graphene", Dropped: true, Reason: "too_long"})})
	if err != nil || w.Call != nil {
		t.Fatalf("dropped: %v %+v", err, w)
	}
	if b, _ := w.Compute(); string(b) != `{"dropped":true}` || w.KeyParams == nil || len(w.KeyParams) != 0 {
		t.Errorf("dropped output %s, key params %v", b, w.KeyParams)
	}
}

func TestJudgePanelParamErrors(t *testing.T) {
	gen := model("openai/gpt-4o-mini", "openai")
	up := ideasUp(gen, []string{"k1"}, 1)
	for _, tc := range []struct {
		name   string
		params stages.Params
		param  string
		errSub string
	}{
		{"too few after family", stages.Params{"panel": testPanel[:3], "exclude": "family"}, "panel", "panel has 1 judge(s) for the ideas of openai/gpt-4o-mini, fewer than judges_per_idea = 3"},
		{"too few after the generator", stages.Params{"panel": append([]*stages.Model{gen}, testPanel[:2]...)}, "panel", "panel has 2 judge(s) for the ideas of openai/gpt-4o-mini, fewer than judges_per_idea = 3 (excluded: model.openai_gpt_4o_mini is the generator)"},
		{"unknown exclusion", stages.Params{"panel": testPanel, "exclude": "families"}, "exclude", `exclude = "families" is not one of "model"`},
		{"unknown draw", stages.Params{"panel": testPanel, "draw": "per_keyword"}, "draw", `draw = "per_keyword" is not one of "independent"`},
		{"unknown protocol", stages.Params{"panel": testPanel, "protocol": "v3"}, "protocol", `protocol = "v3" is not one of`},
		{"no definition", stages.Params{"panel": testPanel, "dimensions": []string{"originality", "significance"}}, "definitions", `dimension "significance" has no definition`},
		{"stray definition", stages.Params{"panel": testPanel, "definitions": map[string]string{"novelty": "x"}}, "definitions", `definitions has "novelty", which is not one of the dimensions`},
		{"bad template", stages.Params{"panel": testPanel, "prompt": "{{.Ida}}"}, "prompt", "Ida"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.params["ideas"] = up
			_, err := judgeType{}.Layout(&stages.Instance{Address: "stage.judge_panel.x", Params: stages.WithDefaults(judgeType{}, tc.params)})
			pe, ok := err.(*stages.ParamError)
			if !ok || pe.Param != tc.param || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error %v, want a ParamError on %s containing %q", err, tc.param, tc.errSub)
			}
		})
	}
	// A dimension with its definition gets its own prompt line and score.
	nodes, err := judgeType{}.Layout(&stages.Instance{Address: "stage.judge_panel.x", Params: stages.WithDefaults(judgeType{}, stages.Params{
		"ideas": up, "panel": testPanel, "dimensions": []string{"originality", "significance"}, "definitions": map[string]string{"significance": "Importance to the field"}})})
	if err != nil {
		t.Fatal(err)
	}
	w, err := nodes[0].Prepare([]stages.In{ideaIn(up, 0, Idea{Keyword: "x", Idea: "y"})})
	if err != nil {
		t.Fatal(err)
	}
	sys := w.Call.Request.Messages[0].Content
	if !strings.Contains(sys, "on two key dimensions:\n\n1. originality: Novel contribution to unexplored areas or innovative approaches to existing problems \n2. significance: Importance to the field\n") ||
		!reflect.DeepEqual(w.Call.Request.Format.Fields, []string{"originality", "significance"}) || w.Call.Request.Format.Kind != format.Scores {
		t.Errorf("system prompt %q, format %+v", sys, w.Call.Request.Format)
	}
}

func TestFluencyPairsAndRequest(t *testing.T) {
	gen := model("qwen/qwq-32b-preview", "qwen")
	for samples, wantPairs := range map[int]int{1: 0, 2: 1, 3: 1, 4: 2, 7: 3} {
		up := ideasUp(gen, []string{"k1"}, samples)
		pairs := Pairs(9, "k1", up, up.ItemNodes("k1"))
		if len(pairs) != wantPairs {
			t.Fatalf("%d samples: %d pairs, want %d", samples, len(pairs), wantPairs)
		}
		seen := map[int]bool{}
		for _, p := range pairs {
			if p[0] == p[1] || seen[p[0]] || seen[p[1]] {
				t.Fatalf("%d samples: pairs %v reuse an idea", samples, pairs)
			}
			seen[p[0]], seen[p[1]] = true, true
		}
	}
	up := ideasUp(gen, []string{"k1", "k2"}, 2)
	inst := &stages.Instance{Address: `stage.fluency.main["qwen/qwq-32b-preview"]`,
		Params: stages.WithDefaults(fluencyType{}, stages.Params{"ideas": up, "panel": testPanel, "seed": 2})}
	nodes, err := fluencyType{}.Layout(inst)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 {
		t.Fatalf("%d nodes, want 2 (one pair per keyword, one judge each)", len(nodes))
	}
	n := nodes[0]
	in := []stages.In{ideaIn(up, n.Deps[0].Index, Idea{Keyword: "graphene", Idea: "Idea one."}), ideaIn(up, n.Deps[1].Index, Idea{Keyword: "graphene", Idea: "Idea two."})}
	w, err := n.Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "fluency_request.txt", append([]byte(n.Label+"\n"), requestText(t, w.Call.Request)...))
	out, _ := w.Call.Output(&format.Answer{Letter: "B", Raw: "Answer: B"})
	if string(out) != `{"letter":"B","judge":"`+w.Call.Model.Name+`","authors_parse":{"letter":"A","valid":true,"parser":"`+format.ParserLiveIdeaBenchLetterV2+`"}}` {
		t.Errorf("output %s", out)
	}
	for _, tc := range []struct {
		params stages.Params
		param  string
		errSub string
	}{
		{stages.Params{"method": "embedding"}, "method", `method = "embedding" is not one of "judge", "jaccard", "tfidf"`},
		{stages.Params{"method": "jaccard", "panel": testPanel}, "panel", "needs no judges"},
		{stages.Params{}, "panel", "panel is empty"},
	} {
		tc.params["ideas"] = up
		_, err := fluencyType{}.Layout(&stages.Instance{Params: stages.WithDefaults(fluencyType{}, tc.params)})
		pe, ok := err.(*stages.ParamError)
		if !ok || pe.Param != tc.param || !strings.Contains(err.Error(), tc.errSub) {
			t.Errorf("%v: error %v, want %s: %q", tc.params, err, tc.param, tc.errSub)
		}
	}
}

func TestOfflineFluency(t *testing.T) {
	if got := strings.Join(Tokens("State-of-the-art 3.5 V, don't!"), "|"); got != "state-of-the-art|3.5|v|,|don't|!" {
		t.Errorf("tokens %s", got)
	}
	a, b := "Graphene membranes filter salt", "graphene sensors detect salt"
	// Sets {graphene, membranes, filter, salt} and {graphene, sensors,
	// detect, salt}: 2 shared of 6.
	if got := Jaccard(a, b); got != 2.0/6 {
		t.Errorf("jaccard %v", got)
	}
	// Shared terms have idf ln(3/3)+1 = 1, the others u = ln(3/2)+1, so
	// cos = 2 / (2 + 2u²).
	u := math.Log(1.5) + 1
	if got, want := TFIDFCosine(a, b), 2/(2+2*u*u); math.Abs(got-want) > 1e-15 {
		t.Errorf("tfidf %v, want %v", got, want)
	}
	if TFIDFCosine(a, a) < 1-1e-12 || Jaccard(a, a) != 1 || Jaccard("", "") != 0 || TFIDFCosine("", "x") != 0 {
		t.Error("identical or empty texts")
	}
	up := ideasUp(model("x/y", "x"), []string{"k1"}, 2)
	nodes, err := fluencyType{}.Layout(&stages.Instance{Params: stages.WithDefaults(fluencyType{}, stages.Params{"ideas": up, "method": "jaccard"})})
	if err != nil {
		t.Fatal(err)
	}
	w, err := nodes[0].Prepare([]stages.In{ideaIn(up, 0, Idea{Keyword: "k", Idea: a}), ideaIn(up, 1, Idea{Keyword: "k", Idea: b})})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := w.Compute()
	var o FluencyOutput
	_ = json.Unmarshal(out, &o)
	if o.Method != "jaccard" || *o.Similarity != 2.0/6 || math.Abs(*o.Score-(1-2.0/6)*10) > 1e-12 {
		t.Errorf("jaccard output %s", out)
	}
}
