package ideabench

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// readTestdata returns testdata/name.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The authors' prompts, byte for byte: testdata/authors_*_prompt*.txt are
// the texts the authors' LangChain templates at 9dbd125 give for the same
// data (each template's pieces joined as FewShotPromptTemplate joins them),
// one user message with nothing after it.
func TestAuthorsGeneratePrompt(t *testing.T) {
	refs := FilterOutput{Target: Target{ID: "p1"}, References: []Ref{
		{ID: "r1", Abstract: "first abstract"},
		{ID: "r2", Abstract: "second {greater than or equal to} abstract"},
	}}
	for _, tc := range []struct {
		refs FilterOutput
		want string
	}{
		{refs, "authors_generate_prompt.txt"},
		{FilterOutput{Target: Target{ID: "p1"}, References: []Ref{}}, "authors_generate_prompt_no_refs.txt"},
	} {
		nodes := generateNodes(t, stages.Params{"prompt_style": "authors", "n": 3}, "p1")
		if len(nodes) != 3 {
			t.Fatalf("%d nodes, want 3 independent samples", len(nodes))
		}
		c := call(t, nodes[1], []stages.In{{Node: stages.NodeInfo{Item: "p1"}, Output: mustJSON(t, tc.refs)}})
		msgs := c.Request.Messages
		if len(msgs) != 1 || msgs[0].Role != "user" || msgs[0].Content != readTestdata(t, tc.want) {
			t.Errorf("%s: messages %+v", tc.want, msgs)
		}
		if c.Request.Format.Kind != format.Text || c.Request.Sample != 1 {
			t.Errorf("format %+v sample %d", c.Request.Format, c.Request.Sample)
		}
		// The whole answer is the idea, as StrOutputParser reads it.
		out, err := c.Output(&format.Answer{Text: "Hypothesis: astrocytes clear tau.\n\nRationale: ..."})
		if err != nil || string(out) != `{"ideas":["Hypothesis: astrocytes clear tau.\n\nRationale: ..."]}` {
			t.Errorf("output %s, %v", out, err)
		}
	}
	// Braces go, as the authors strip them before formatting their template.
	if got := authorsAbstract("a {b} {greater than or equal to} c}"); got != "a b ≥ c" {
		t.Errorf("authorsAbstract: %q", got)
	}
	_, err := generateType{}.Layout(&stages.Instance{Address: "stage.generate_ideas.g", Params: stages.WithDefaults(generateType{}, stages.Params{
		"references": stageUp("stage.filter_references.low", "filter_references", "", []stages.Node{{Item: "p1"}}, datasetUp("p1")),
		"model":      testModel, "prompt_style": "authors", "mode": "batch"})})
	checkParamError(t, err, "mode", `prompt_style = "authors" asks for one hypothesis per request, as the authors ask n times: use mode = "independent"`)
}

func rankAuthorsNodes(t *testing.T, params stages.Params) []stages.Node {
	t.Helper()
	ideas := stageUp("stage.generate_ideas.main", "generate_ideas", "", []stages.Node{{Item: "t1"}}, datasetUp("t1"))
	return layout(t, rankType{}, "stage.rank_ideas.novelty", merge(stages.Params{"ideas": ideas, "judge": testJudge, "quality": novelty,
		"prompt_style": "authors", "order": "target_first"}, params))
}

func TestAuthorsRankPromptAndParse(t *testing.T) {
	nodes := rankAuthorsNodes(t, nil)
	in := func(ideas ...string) []stages.In {
		return []stages.In{
			{Node: stages.NodeInfo{Item: "t1"}, Output: mustJSON(t, IdeasOutput{Ideas: ideas})},
			{Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"id":"t1","abstract":"An abstract.","idea":"GT"}`)},
		}
	}
	c := call(t, nodes[0], in("H1", "H2"))
	if msgs := c.Request.Messages; len(msgs) != 1 || msgs[0].Content != readTestdata(t, "authors_rank_prompt.txt") {
		t.Errorf("messages %q", msgs)
	}
	if c.Request.Format.Kind != format.Ranking || c.Request.Format.Letters != "ABC" {
		t.Errorf("format %+v", c.Request.Format)
	}
	for _, tc := range []struct {
		name   string
		answer *format.Answer
		want   *AuthorsRanking
	}{
		{"read as the strict parse", &format.Answer{Ranking: []string{"B", "A", "C"}, Raw: "1. Hypothesis B: bold\n2. Hypothesis A: known\n3. Hypothesis C: weak"},
			&AuthorsRanking{Order: []string{"B", "A", "C"}, TargetLetter: "A", TargetRank: 2, N: 2, Parser: format.IdeaBenchRankingParser}},
		{"a repeat moves the denominator", &format.Answer{Ranking: []string{"C", "B", "A"}, Raw: "1. Hypothesis C: better than Hypothesis B: here\n2. Hypothesis B: fine\n3. Hypothesis A: weak"},
			&AuthorsRanking{Order: []string{"C", "B", "B", "A"}, TargetLetter: "A", TargetRank: 4, N: 3, Parser: format.IdeaBenchRankingParser}},
		{"the first answer, before a repair", &format.Answer{Ranking: []string{"A", "B", "C"}, Raw: "Ranking: A > B > C", Reasked: true, FirstRaw: "1. Hypothesis C: novel\n2. Hypothesis B: fine"},
			&AuthorsRanking{Order: []string{"C", "B"}, TargetLetter: "A", TargetRank: 0, N: 1, Parser: format.IdeaBenchRankingParser}},
		{"a ranking line reads nothing", &format.Answer{Ranking: []string{"B", "A", "C"}, Raw: "Ranking: B > A > C"},
			&AuthorsRanking{Order: []string{}, TargetLetter: "A", N: 0, Parser: format.IdeaBenchRankingParser}},
		{"an answer cached without its text", &format.Answer{Ranking: []string{"B", "A", "C"}}, nil},
	} {
		out, err := c.Output(tc.answer)
		if err != nil {
			t.Fatal(err)
		}
		var r RankOutput
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.AuthorsParse, tc.want) {
			t.Errorf("%s: authors_parse %+v, want %+v", tc.name, r.AuthorsParse, tc.want)
		}
		if !reflect.DeepEqual(r.Order, tc.answer.Ranking) {
			t.Errorf("%s: the strict order %v changed", tc.name, r.Order)
		}
	}
	// A brace in an idea: the authors' str.format fails, their ranking is empty.
	c = call(t, nodes[0], in(`H1 uses $\frac{a}{b}$`, "H2"))
	out, err := c.Output(&format.Answer{Ranking: []string{"B", "A", "C"}, Raw: "1. Hypothesis B: x\n2. Hypothesis A: y\n3. Hypothesis C: z"})
	if err != nil {
		t.Fatal(err)
	}
	var r RankOutput
	if err := json.Unmarshal(out, &r); err != nil || r.AuthorsParse == nil || len(r.AuthorsParse.Order) != 0 || !strings.Contains(r.AuthorsParse.Error, "str.format") {
		t.Errorf("brace: %s", out)
	}
	for text, want := range map[string]bool{"plain": false, "a {{doubled}} brace": false, "{ranking_criteria} is fine": false, "one {": true, "x}": true, "{}": true} {
		if got := authorsTemplateError([]string{text}) != ""; got != want {
			t.Errorf("authorsTemplateError(%q) = %v, want %v", text, got, want)
		}
	}
	// ideaflow's style keeps its own prompt and instructions.
	c = call(t, rankAuthorsNodes(t, stages.Params{"prompt_style": "ideaflow"})[0], in("H1", "H2"))
	if content := c.Request.Messages[0].Content; !strings.Contains(content, "By novelty we mean:") || !strings.Contains(content, "Ranking: B > A > C") {
		t.Errorf("ideaflow prompt %q", content)
	}
}

// The strict parser reads the authors' answer format, so a faithful run
// needs no repairs for a well-formed answer.
func TestStrictParseReadsAuthorsFormat(t *testing.T) {
	for _, answer := range []string{
		"1. Hypothesis C: the most novel.\n2. Hypothesis A: solid.\n3. Hypothesis B: derivative.",
		"1. **Hypothesis C**: the most novel.\n2. **Hypothesis A**: solid.\n3. **Hypothesis B**: derivative.",
		"1. **Hypothesis C:** the most novel, beyond Hypothesis A.\n2. **Hypothesis A:** solid.\n3. **Hypothesis B:** derivative.",
	} {
		a, err := format.Parse(format.Spec{Kind: format.Ranking, Letters: "ABC"}, answer)
		if err != nil || !reflect.DeepEqual(a.Ranking, []string{"C", "A", "B"}) {
			t.Errorf("%q: %v, %v", answer, a, err)
		}
	}
}

func TestAuthorsOverlapPromptAndParse(t *testing.T) {
	rec := stages.In{Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"id":"t1","abstract":"ABS","references":[]}`)}
	ideas := stageUp("stage.generate_ideas.main", "generate_ideas", "", []stages.Node{{Item: "t1"}}, datasetUp("t1"))
	nodes := layout(t, overlapType{}, "stage.overlap_rating.o", stages.Params{"ideas": ideas, "judge": testJudge, "prompt_style": "authors", "scale": "1-10"})
	c := call(t, nodes[0], []stages.In{rec, {Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"ideas":["HYP"]}`)}})
	if msgs := c.Request.Messages; len(msgs) != 1 || msgs[0].Content != readTestdata(t, "authors_overlap_prompt.txt") {
		t.Errorf("messages %q", msgs)
	}
	if f := c.Request.Format; f.Kind != format.Rating || f.Min != 1 || f.Max != 10 {
		t.Errorf("format %+v", f)
	}
	seven := 7
	for _, tc := range []struct {
		answer *format.Answer
		want   *AuthorsRating
	}{
		{&format.Answer{Rating: 7, Explanation: "close", Raw: "Rating: 7\nExplanation: close"}, &AuthorsRating{Rating: &seven, Explanation: "close", Parser: format.IdeaBenchRatingParser}},
		{&format.Answer{Rating: 7, Explanation: "close", Raw: "I rate it seven.\nRating: 7\nExplanation: close"}, &AuthorsRating{Rating: &seven, Explanation: "close", Parser: format.IdeaBenchRatingParser}},
		{&format.Answer{Rating: 6, Raw: "Rating: 6", Reasked: true, FirstRaw: "No overlap worth a number."},
			&AuthorsRating{Explanation: "No overlap worth a number.", Parser: format.IdeaBenchRatingParser}},
		{&format.Answer{Rating: 7}, nil},
	} {
		out, err := c.Output(tc.answer)
		if err != nil {
			t.Fatal(err)
		}
		var o OverlapOutput
		if err := json.Unmarshal(out, &o); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(o.AuthorsParse, tc.want) || o.Rating != tc.answer.Rating {
			t.Errorf("%q: %+v, want %+v", tc.answer.Raw, o.AuthorsParse, tc.want)
		}
	}
	_, err := overlapType{}.Layout(&stages.Instance{Address: "stage.overlap_rating.o", Params: stages.WithDefaults(overlapType{}, stages.Params{"ideas": ideas, "judge": testJudge, "scale": "1-5"})})
	checkParamError(t, err, "scale", `scale = "1-5" is not one of "0-10", "1-10"`)
}

// insight_score and overlap_score over both readings of the same answers.
func TestScoresByParse(t *testing.T) {
	rank := func(strictRank int, authors *AuthorsRanking) RankOutput {
		return RankOutput{N: 3, TargetLetter: "A", TargetRank: strictRank, AuthorsParse: authors}
	}
	ar := func(order string) *AuthorsRanking {
		o := strings.Split(order, "")
		r := &AuthorsRanking{Order: o, TargetLetter: "A", N: max(len(o)-1, 0)}
		for i, l := range o {
			if l == "A" {
				r.TargetRank = i + 1
				break
			}
		}
		return r
	}
	in := []stages.In{
		rankIn(t, "p1", 0, rank(2, ar("BACD"))),  // 1/3 both ways
		rankIn(t, "p2", 0, rank(4, ar("BCD"))),   // strict 1; the authors do not find A
		rankIn(t, "p3", 0, rank(1, ar("AABCD"))), // strict 0; authors 0 (first A)
		rankIn(t, "p4", 0, rank(3, ar("BBAC"))),  // strict 2/3; authors 2/3 (index 2 of 4)
		rankIn(t, "p5", 0, rank(3, nil)),         // cached before authors_parse
		rankIn(t, "p6", 0, `{"dropped":true}`),
	}
	score := func(typ stages.Type, params stages.Params, in []stages.In) stages.Score {
		t.Helper()
		nodes := layout(t, typ, "stage.x.y", params)
		var s stages.Score
		if err := json.Unmarshal(compute(t, nodes[0], in), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	ranks := stageUp("stage.rank_ideas.r", "rank_ideas", "", nil, nil)
	for _, p := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		ranks.Nodes = append(ranks.Nodes, stages.NodeInfo{Item: p})
	}
	strict := score(insightType{}, stages.Params{"ranks": ranks}, in)
	authors := score(insightType{}, stages.Params{"ranks": ranks, "parse": "authors"}, in)
	diff := score(insightType{}, stages.Params{"ranks": ranks, "parse": "authors_minus_strict"}, in)
	wantStrict := (1.0/3 + 1 + 0 + 2.0/3 + 2.0/3) / 5
	wantAuthors := (1.0/3 + 0 + 2.0/3) / 3
	if !near(strict.Value, wantStrict) || strict.Count != 5 {
		t.Errorf("strict %+v, want %v", strict, wantStrict)
	}
	if !near(authors.Value, wantAuthors) || authors.Count != 3 || authors.Missing != 1 || authors.Extra["unread"] != 1 ||
		!near(authors.Extra["strict"], wantStrict) || authors.Extra["dropped"] != 1 {
		t.Errorf("authors %+v, want %v over 3 targets", authors, wantAuthors)
	}
	if !near(diff.Value, wantAuthors-wantStrict) {
		t.Errorf("difference %v, want %v", diff.Value, wantAuthors-wantStrict)
	}

	eight, twelve := 8, 12
	rating := func(strict int, authors *int, read bool) OverlapOutput {
		o := OverlapOutput{Rating: strict}
		if read {
			o.AuthorsParse = &AuthorsRating{Rating: authors}
		}
		return o
	}
	oin := []stages.In{
		{Node: stages.NodeInfo{Item: "p1"}, Output: mustJSON(t, rating(8, &eight, true))},
		{Node: stages.NodeInfo{Item: "p2"}, Output: mustJSON(t, rating(6, &twelve, true))}, // outside the scale, as the authors read it
		{Node: stages.NodeInfo{Item: "p3"}, Output: mustJSON(t, rating(4, nil, true))},     // no number for the authors
		{Node: stages.NodeInfo{Item: "p4"}, Output: mustJSON(t, rating(2, nil, false))},    // cached before authors_parse
	}
	ratings := stageUp("stage.overlap_rating.o", "overlap_rating", "", []stages.Node{{Item: "p1"}, {Item: "p2"}, {Item: "p3"}, {Item: "p4"}}, nil)
	so := score(overlapScoreType{}, stages.Params{"ratings": ratings}, oin)
	ao := score(overlapScoreType{}, stages.Params{"ratings": ratings, "parse": "authors"}, oin)
	if so.Value != 5 || so.Count != 4 {
		t.Errorf("strict overlap %+v", so)
	}
	if ao.Value != 10 || ao.Count != 2 || ao.Missing != 1 || ao.Extra["unread"] != 1 || ao.Extra["strict"] != 5 {
		t.Errorf("authors overlap %+v", ao)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
