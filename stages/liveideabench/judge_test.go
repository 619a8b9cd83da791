package liveideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
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

// LiveIdeaBench's length rules (min_chars, max_chars, max_words) belong
// to its generation, generate_from_keyword, which drops the ideas outside
// them; judge_panel judges what it is given. An IdeaBench batch of ideas
// far shorter than min_chars = 101 is judged, every idea, by a call
// whose prompt holds it.
func TestJudgePanelJudgesShortIdeaBenchIdeas(t *testing.T) {
	gen := model("mock-gen", "fam-gen")
	short := []string{"Biochar for soil carbon.", "Kelp by turbines.", "Microbes against drought."}
	up := &stages.Upstream{Address: `stage.generate_ideas.g`, Generator: gen,
		Fields: []stages.Field{{Name: stages.FieldIdeas, Type: stages.TextsField, PerNode: len(short)}},
		Nodes:  []stages.NodeInfo{{Item: "t0"}}}
	nodes, err := judgeType{}.Layout(&stages.Instance{Address: "stage.judge_panel.p",
		Params: stages.WithDefaults(judgeType{}, stages.Params{"ideas": up, "panel": testPanel, "judges_per_idea": 2})})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(short)*2 {
		t.Fatalf("%d judgements, want %d (3 ideas x 2 judges)", len(nodes), len(short)*2)
	}
	b, _ := json.Marshal(map[string][]string{"ideas": short})
	in := []stages.In{{Dep: stages.Dep{Input: "ideas"}, Node: up.Nodes[0], From: up, Output: b}}
	judged := map[string]int{}
	for _, n := range nodes {
		w, err := n.Prepare(in)
		if err != nil {
			t.Fatalf("%s: %v", n.Label, err)
		}
		if w.Call == nil {
			t.Fatalf("%s: no call (dropped?): %+v", n.Label, w)
		}
		user := w.Call.Request.Messages[len(w.Call.Request.Messages)-1].Content
		for _, idea := range short {
			if strings.Contains(user, idea) {
				judged[idea]++
			}
		}
	}
	for _, idea := range short {
		if judged[idea] != 2 {
			t.Errorf("%q (%d chars) judged %d times, want 2", idea, len(idea), judged[idea])
		}
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

// judgeSets lays out judge_panel for gen's ideas (items x 2 samples) and
// returns each idea's judges, by "item/sample".
func judgeSets(t *testing.T, gen *stages.Model, panel []*stages.Model, items []string, extra stages.Params) map[string][]string {
	t.Helper()
	params := stages.Params{"ideas": ideasUp(gen, items, 2), "panel": panel, "seed": 2024}
	for k, v := range extra {
		params[k] = v
	}
	nodes, err := judgeType{}.Layout(&stages.Instance{Address: `stage.judge_panel.s["` + gen.Name + `"]`, Params: stages.WithDefaults(judgeType{}, params)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, n := range nodes {
		sample, judge, ok := strings.Cut(strings.TrimPrefix(n.Label, "sample "), " judge ")
		if !ok {
			t.Fatalf("label %q does not record the judge", n.Label)
		}
		k := n.Item + "/" + sample
		out[k] = append(out[k], judge)
	}
	return out
}

func tenJudges() []*stages.Model {
	return []*stages.Model{
		model("o1-preview", "openai"), model("google/gemini-2.0-flash-exp:free", "google"), model("anthropic/claude-3.5-sonnet", "anthropic"),
		model("openai/o1-mini", "openai"), model("step-2-16k", "stepfun"), model("google/gemini-pro-1.5", "google"),
		model("x-ai/grok-2-1212", "xai"), model("sammcj/qwen2.5-dracarys2-72b:Q4_K_M", "qwen"), model("meta-llama/llama-3.1-405b-instruct", "meta-llama"),
		model("openai/gpt-4o-2024-11-20", "openai"),
	}
}

// The authors' panel (the defaults): each idea's 3 judges are drawn on
// their own, so two generators' ideas of the same keyword and sample get
// the same judges about as often as two random draws do (1 in C(10,3) =
// 120 for generators outside the panel), not always; ideaflow's shared
// draw gives them the same judges for every idea. The draw is seeded: the
// same seed gives the same draws, another seed others; the judge of each
// node is recorded in its label and in its output.
func TestJudgePanelDrawIndependentPerIdea(t *testing.T) {
	items := make([]string, 150)
	for i := range items {
		items[i] = fmt.Sprintf("kw%03d", i)
	}
	a, b := model("mistralai/mistral-large-2411", "mistral"), model("amazon/nova-pro-v1", "amazon")
	same := func(x, y map[string][]string) int {
		n := 0
		for k, js := range x {
			if strings.Join(sortedCopy(js), ",") == strings.Join(sortedCopy(y[k]), ",") {
				n++
			}
		}
		return n
	}
	da, db := judgeSets(t, a, tenJudges(), items, nil), judgeSets(t, b, tenJudges(), items, nil)
	if len(da) != 300 || len(db) != 300 {
		t.Fatalf("%d and %d ideas", len(da), len(db))
	}
	if n := same(da, db); n > 15 {
		t.Errorf("independent draws: the two generators got the same 3 judges for %d of 300 ideas (expected about 300/120)", n)
	}
	sa, sb := judgeSets(t, a, tenJudges(), items, stages.Params{"draw": "shared"}), judgeSets(t, b, tenJudges(), items, stages.Params{"draw": "shared"})
	if n := same(sa, sb); n != 300 {
		t.Errorf("shared draws: the same judges for %d of 300 ideas, want 300", n)
	}
	// Seeded: the same seed draws the same judges; another seed others.
	if n := same(da, judgeSets(t, a, tenJudges(), items, nil)); n != 300 {
		t.Errorf("the same seed redrew %d of 300 ideas", 300-n)
	}
	if n := same(da, judgeSets(t, a, tenJudges(), items, stages.Params{"seed": 7})); n > 15 {
		t.Errorf("seed 7 drew the same judges as seed 2024 for %d of 300 ideas", n)
	}
	// Recorded: the node's judge is the one asked, and its output names it.
	up := ideasUp(a, items[:1], 1)
	nodes, err := judgeType{}.Layout(&stages.Instance{Address: "stage.judge_panel.r", Params: stages.WithDefaults(judgeType{}, stages.Params{"ideas": up, "panel": tenJudges(), "seed": 2024})})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		w, err := n.Prepare([]stages.In{ideaIn(up, 0, Idea{Keyword: "k", Idea: "An idea."})})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := w.Call.Output(&format.Answer{Fields: map[string]int{"originality": 5, "feasibility": 5, "clarity": 5}})
		var j Judgement
		_ = json.Unmarshal(out, &j)
		if !strings.HasSuffix(n.Label, " judge "+w.Call.Model.Name) || w.Call.Request.Model != w.Call.Model.Name || j.Judge != w.Call.Model.Name {
			t.Errorf("%s: asked %s, output names %s", n.Label, w.Call.Request.Model, j.Judge)
		}
	}
}

// The generator is excluded by its exact model name (the authors' rule):
// a panel judge of the same name never judges it, one of its family does;
// exclude = "family" keeps the whole family out.
func TestJudgePanelExcludesByExactName(t *testing.T) {
	items := make([]string, 100)
	for i := range items {
		items[i] = fmt.Sprintf("kw%03d", i)
	}
	gen := model("openai/o1-mini", "openai")
	count := func(sets map[string][]string) map[string]int {
		out := map[string]int{}
		for _, js := range sets {
			for _, j := range js {
				out[j]++
			}
		}
		return out
	}
	byName := count(judgeSets(t, gen, tenJudges(), items, nil))
	if byName["openai/o1-mini"] != 0 || byName["o1-preview"] == 0 || byName["openai/gpt-4o-2024-11-20"] == 0 {
		t.Errorf("exclude = model: %v", byName)
	}
	byFamily := count(judgeSets(t, gen, tenJudges(), items, stages.Params{"exclude": "family"}))
	if byFamily["openai/o1-mini"]+byFamily["o1-preview"]+byFamily["openai/gpt-4o-2024-11-20"] != 0 || len(byFamily) != 7 {
		t.Errorf("exclude = family: %v", byFamily)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// The first release's texts (utils/prompts.yaml at 8dbdfef, as YAML reads
// them; the December 2024 leaderboard's), verbatim.
const (
	paperCriticV1  = "You are an extremely demanding scientific reviewer with the highest critical standards, like those at Nature or Science. When evaluating scientific ideas, you will assess them on two key dimensions:\n\n1. originality: Novel contribution to unexplored areas\n2. feasibility: Technical implementation and practicality\n\nFor each dimension, you will provide a score from 1 to 10, no need to explain the reason.\n\nYour response MUST ALWAYS follow this exact Python dictionary format for consistency and parsing:\n\nSCORES = {\n    \"originality\": <score_1_to_10>,\n    \"feasibility\": <score_1_to_10>\n}\n"
	paperIdeaV1    = "I'll be submitting your next responses to a \"Good Scientific Idea\" expert review panel. If they consider your idea to be a good one, you'll receive a reward. Your assigned keyword is: \"{{keywords}}\". You may provide background information. The idea MUST be within 100 words (including background information). (Note: good scientific ideas should be novel, verifiable, practically valuable, and able to advance the field.)."
	paperFluencyV1 = "Here are two ideas submitted to \"Good Scientific Ideas\" Competition, which both relate to \"{{keyword}}\":\n# The first idea\n\n{{A}}\n\n# The second idea\n\n{{B}}\n\n# Question\n\nAre these two ideas, which both relate to \"{{keyword}}\", the same? Please choose the best answer:\n\nA. Different, even though they're both related to the same keyword.\nB. Similar but not academically equivalent\nC. Very similar academically\nD. Academically identical\n\nONLY ANSWER A/B/C/D, DO NOT EXPLAIN"
)

// protocol = "v1" sends the December 2024 texts: the judge's system and
// user messages, two dimensions, the idea prompt with no refusal
// detection and QwQ's instruction after one newline, the fluency
// question; and its authors_parse is the first release's parser.
func TestProtocolV1Requests(t *testing.T) {
	gen := model("qwen/qwq-32b-preview", "qwen")
	up := ideasUp(gen, []string{"k1"}, 2)
	nodes, err := judgeType{}.Layout(&stages.Instance{Address: "stage.judge_panel.v1", Params: stages.WithDefaults(judgeType{}, stages.Params{"ideas": up, "panel": testPanel, "protocol": "v1"})})
	if err != nil {
		t.Fatal(err)
	}
	w, err := nodes[0].Prepare([]stages.In{ideaIn(up, 0, Idea{Keyword: "graphene", Idea: "Use graphene membranes to filter salt."})})
	if err != nil {
		t.Fatal(err)
	}
	msgs := w.Call.Request.Messages
	// ideaflow sends every message trimmed: the YAML block's final newline goes.
	if msgs[0].Content != strings.TrimSpace(paperCriticV1) || msgs[1].Content != "Please evaluate the following scientific idea and give your scores directly:\n\nUse graphene membranes to filter salt." {
		t.Errorf("v1 judge messages %q", msgs)
	}
	if !reflect.DeepEqual(w.Call.Request.Format.Fields, []string{"originality", "feasibility"}) {
		t.Errorf("v1 dimensions %v", w.Call.Request.Format.Fields)
	}
	out, _ := w.Call.Output(&format.Answer{Fields: map[string]int{"originality": 8, "feasibility": 5}, Raw: "SCORES = {\n    \"originality\": 8,\n    \"feasibility\": 5\n}"})
	var j Judgement
	_ = json.Unmarshal(out, &j)
	if ap := j.AuthorsParse; ap == nil || !ap.Valid || ap.Scores["originality"] != 8 || ap.Parser != format.ParserLiveIdeaBenchScoresV1 || *ap.Mean != 6.5 {
		t.Errorf("v1 authors_parse %s", out)
	}
	// The v2 parser reads nothing from the v1 form: the protocol decides.
	out, _ = judgementOutput("j", []string{"originality", "feasibility"}, &format.Answer{Raw: "SCORES = {\"originality\": 8, \"feasibility\": 5}"}, releases["v2"])
	if err := json.Unmarshal(out, &j); err != nil || j.AuthorsParse.Valid {
		t.Errorf("v2 parser on the v1 form: %s", out)
	}

	gnodes := layoutGen(t, stages.Params{"protocol": "v1", "final_idea": true}, "graphene")
	c := callOf(t, gnodes[0], `{"keyword":"graphene"}`)
	wantIdea := strings.Replace(paperIdeaV1, "{{keywords}}", "graphene", 1) + "\nYou MUST give your answer after **Final Idea:**"
	if got := c.Request.Messages[0].Content; got != wantIdea || len(c.Request.Format.Refusals) != 0 {
		t.Errorf("v1 idea prompt %q (refusals %v), want %q", got, c.Request.Format.Refusals, wantIdea)
	}

	fnodes, err := fluencyType{}.Layout(&stages.Instance{Address: "stage.fluency.v1", Params: stages.WithDefaults(fluencyType{}, stages.Params{"ideas": up, "panel": testPanel, "protocol": "v1"})})
	if err != nil {
		t.Fatal(err)
	}
	n := fnodes[0]
	fw, err := n.Prepare([]stages.In{ideaIn(up, n.Deps[0].Index, Idea{Keyword: "graphene", Idea: "Idea one."}), ideaIn(up, n.Deps[1].Index, Idea{Keyword: "graphene", Idea: "Idea two."})})
	if err != nil {
		t.Fatal(err)
	}
	wantFluency := strings.NewReplacer("{{keyword}}", "graphene", "{{A}}", "Idea one.", "{{B}}", "Idea two.").Replace(paperFluencyV1)
	if got := fw.Call.Request.Messages[0].Content; got != wantFluency {
		t.Errorf("v1 fluency prompt\n%q\nwant\n%q", got, wantFluency)
	}
	// A text set by hand wins over the protocol's.
	nodes, err = judgeType{}.Layout(&stages.Instance{Address: "stage.judge_panel.own", Params: stages.WithDefaults(judgeType{}, stages.Params{"ideas": up, "panel": testPanel, "protocol": "v1", "prompt": "Idea: {{.Idea}}"})})
	if err != nil {
		t.Fatal(err)
	}
	w, _ = nodes[0].Prepare([]stages.In{ideaIn(up, 0, Idea{Keyword: "graphene", Idea: "x"})})
	if got := w.Call.Request.Messages[1].Content; got != "Idea: x" {
		t.Errorf("own prompt under v1: %q", got)
	}
}
