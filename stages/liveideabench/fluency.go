package liveideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/judging"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func init() { stages.Register(fluencyType{}) }

// Fluency: how different a model's ideas for one keyword are. The ideas of
// each (keyword, model) are paired, each idea in at most one pair, and
// each pair is judged (A: completely different ... D: identical) or
// measured offline. Pairs are fixed at layout from the sample indexes, so
// the plan is exact; a pair with a dropped idea is dropped.
//
// A judge's output is its letter, not a score: the letter-to-score mapping
// (v1 or v2) is applied by the aggregates (liveideabench_score,
// leaderboard), because a model node's output must follow from its
// request, and changing the mapping must not ask the judges again.

var fluencyLetters = format.Spec{Kind: format.Letter, Letters: "ABCD"}

type fluencyType struct{}

func (fluencyType) Name() string    { return "fluency" }
func (fluencyType) Version() string { return "2" } // 2: draws per pair and generator, exclusion by name, authors_parse

func (fluencyType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Doc: "the ideas of one model (a generate_from_keyword instance); its samples for each keyword are paired"},
		{Name: "method", Kind: stages.String, Default: "judge", Doc: `"judge" (a judge of the panel answers A/B/C/D, the paper), "jaccard" or "tfidf" (offline: (1 - similarity) x 10 of the pair's word sets or TF-IDF vectors, as the authors' hash.py)`},
		{Name: "panel", Kind: stages.ModelList, Doc: `method = "judge": the judge models; each pair gets judges_per_pair of them (see exclude and draw)`},
		{Name: "judges_per_pair", Kind: stages.Int, Default: 1, Min: 1, Max: maxJudges, Doc: "judges drawn per pair (the paper: 1)"},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: math.MinInt32, Max: math.MaxInt32, Doc: "seed of the pairing, of which idea is shown first, and of the judge draws"},
		withDoc(excludeParam, `who may not judge a pair: "model" (its generator, by exact model name, as the paper says of every judgement), "family" (the generator's whole family) or "none" (as the authors' hash.py, whose fluency judge is random.choice(CRITIC_MODELS))`),
		withDoc(drawParam, `"independent" (each pair its own draw, keyed on its generator, keyword and pair, as hash.py draws per pair) or "shared" (one draw per keyword and pair: every generator's pair gets the same judge, unless excluded)`),
		protocolParam,
		{Name: "prompt", Kind: stages.Template, Default: DefaultFluencyPrompt, Doc: "the fluency question (data: .Keyword, .A, .B); the answer is read as a letter A-D; the protocol's by default (v2's shown)"},
	}
}

func withDoc(p stages.Param, doc string) stages.Param {
	p.Doc = doc
	return p
}

// FluencyData is the fluency prompt's template data.
type FluencyData struct{ Keyword, A, B string }

// FluencyOutput is a fluency node's output for one pair: the judge's
// letter, or the offline method's similarity and score. A pair with a
// dropped idea is {"dropped": true}.
type FluencyOutput struct {
	Letter string `json:"letter,omitempty"` // A-D (method judge)
	Judge  string `json:"judge,omitempty"`
	// AuthorsParse is the letter hash.py would have read from the same raw
	// answer (method judge): a compatibility parse, never used to accept
	// the answer.
	AuthorsParse *AuthorsLetter `json:"authors_parse,omitempty"`
	Method       string         `json:"method,omitempty"`     // jaccard or tfidf
	Similarity   *float64       `json:"similarity,omitempty"` // offline methods: in [0, 1]
	Score        *float64       `json:"score,omitempty"`      // offline methods: (1 - similarity) x 10
	Dropped      bool           `json:"dropped,omitempty"`
}

// AuthorsLetter is a compatibility parse of a fluency answer: the letter
// as the strict parse's, Valid false with the Reason when hash.py would
// have read none (it asks again), and Parser naming the authors' code.
type AuthorsLetter struct {
	Letter string `json:"letter,omitempty"`
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
	Parser string `json:"parser"`
}

type fluency struct {
	method     string
	prompt     string
	promptName string
	release    *release
}

func (fluencyType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	ideas := p.Input("ideas")
	if ideas == nil {
		return nil, stages.ParamErrorf("ideas", "ideas is required")
	}
	r, err := protocolOf(p)
	if err != nil {
		return nil, err
	}
	f := &fluency{method: p.String("method"), prompt: r.text(p, "prompt", DefaultFluencyPrompt, r.fluencyPrompt), promptName: inst.Address + " prompt", release: r}
	panel := p.Models("panel")
	k := p.Int("judges_per_pair")
	ex, shared, err := drawParams(p)
	if err != nil {
		return nil, err
	}
	switch f.method {
	case "judge":
		if err := judging.Check("panel", "judges_per_pair", panel, ideas.Generator, k, ex); err != nil {
			return nil, err
		}
		if _, err := stages.RenderParam("prompt", f.promptName, f.prompt, &FluencyData{Keyword: "k", A: "a", B: "b"}); err != nil {
			return nil, err
		}
	case "jaccard", "tfidf":
		if len(panel) > 0 {
			return nil, stages.ParamErrorf("panel", "method = %q needs no judges; remove panel or set method = \"judge\"", f.method)
		}
	default:
		return nil, stages.ParamErrorf("method", `method = %q is not one of "judge", "jaccard", "tfidf"`, f.method)
	}
	eligible := judging.Eligible(panel, ideas.Generator, ex)
	position := make(map[string]int, len(panel))
	for i, m := range panel {
		position[m.Name] = i
	}
	prepares := make(map[string]func([]stages.In) (*stages.Work, error), len(eligible))
	for _, m := range eligible {
		prepares[m.Name] = f.prepareJudge(m)
	}
	seed := p.Int("seed")
	var nodes []stages.Node
	for _, item := range ideas.Items() {
		idx := ideas.ItemNodes(item)
		for pi, pair := range Pairs(seed, item, ideas, idx) {
			deps := []stages.Dep{{Input: "ideas", Index: pair[0]}, {Input: "ideas", Index: pair[1]}}
			label := "pair " + strconv.Itoa(pi)
			if f.method != "judge" {
				nodes = append(nodes, stages.Node{Item: item, Slot: pi, Label: label, Deps: deps, Prepare: f.prepareOffline})
				continue
			}
			for _, m := range judging.Draw(seed, DrawKey(shared, ideas.Generator, item, "pair", strconv.Itoa(pi)), eligible, k) {
				nodes = append(nodes, stages.Node{Item: item, Slot: pi*len(panel) + position[m.Name],
					Label: label + " judge " + m.Name, Deps: deps, Prepare: prepares[m.Name]})
			}
		}
	}
	return nodes, nil
}

// Pairs pairs the item's idea nodes (indexes into ideas.Nodes): ordered by
// their rendezvous weight on seed, item and sample index, then taken two
// by two, the first of each shown first; an odd one out is left unpaired.
// Each idea is in at most one pair.
func Pairs(seed int, item string, ideas *stages.Upstream, idx []int) [][2]int {
	type w struct {
		i int
		w uint64
	}
	ws := make([]w, len(idx))
	for k, i := range idx {
		ws[k] = w{i, judging.Weight(seed, judging.Key(item, "fluency"), strconv.Itoa(ideas.Nodes[i].Slot))}
	}
	sort.SliceStable(ws, func(a, b int) bool { return ws[a].w > ws[b].w })
	out := make([][2]int, 0, len(ws)/2)
	for k := 0; k+1 < len(ws); k += 2 {
		out = append(out, [2]int{ws[k].i, ws[k+1].i})
	}
	return out
}

// pairIdeas decodes a pair's two ideas; dropped reports either dropped.
func pairIdeas(in []stages.In) (a, b *Idea, dropped bool, err error) {
	if a, err = decodeIdea(in[0]); err != nil {
		return nil, nil, false, err
	}
	if b, err = decodeIdea(in[1]); err != nil {
		return nil, nil, false, err
	}
	return a, b, a.Dropped || b.Dropped, nil
}

func (f *fluency) prepareJudge(m *stages.Model) func([]stages.In) (*stages.Work, error) {
	return func(in []stages.In) (*stages.Work, error) {
		a, b, dropped, err := pairIdeas(in)
		if err != nil {
			return nil, err
		}
		if dropped {
			return dropWork(), nil
		}
		prompt, err := stages.RenderParam("prompt", f.promptName, f.prompt, &FluencyData{Keyword: a.Keyword, A: a.Idea, B: b.Idea})
		if err != nil {
			return nil, err
		}
		msgs := []llm.Message{{Role: "user", Content: strings.TrimSpace(prompt)}}
		r := f.release
		return &stages.Work{Call: &stages.Call{
			Model:   m,
			Request: m.Request(msgs, 0, fluencyLetters),
			Output: func(ans *format.Answer) ([]byte, error) {
				c := format.LiveIdeaBenchLetter(ans.Raw)
				return json.Marshal(FluencyOutput{Letter: ans.Letter, Judge: m.Name,
					AuthorsParse: &AuthorsLetter{Letter: c.Letter, Valid: c.Valid, Reason: c.Reason, Parser: r.letterParser}})
			},
			KeyParams: []string{"protocol"},
		}}, nil
	}
}

func (f *fluency) prepareOffline(in []stages.In) (*stages.Work, error) {
	a, b, dropped, err := pairIdeas(in)
	if err != nil {
		return nil, err
	}
	if dropped {
		return dropWork(), nil
	}
	method := f.method
	return &stages.Work{KeyParams: []string{"method"}, Compute: func() ([]byte, error) {
		var sim float64
		if method == "jaccard" {
			sim = Jaccard(a.Idea, b.Idea)
		} else {
			sim = TFIDFCosine(a.Idea, b.Idea)
		}
		score := (1 - sim) * 10
		return json.Marshal(FluencyOutput{Method: method, Similarity: &sim, Score: &score})
	}}, nil
}

// Tokens splits text the way the authors' NLTK word_tokenize mostly does,
// lower-cased: words and numbers (with inner hyphens, apostrophes and
// decimal points: "state-of-the-art", "3.5") are tokens, and so is each
// other non-space character. It is an approximation: NLTK also splits
// contractions ("don't" -> "do", "n't"), which ideas seldom hold.
func Tokens(text string) []string {
	rs := []rune(strings.ToLower(text))
	alnum := func(i int) bool { return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) }
	var out []string
	for i := 0; i < len(rs); {
		switch {
		case unicode.IsSpace(rs[i]):
			i++
		case alnum(i):
			j := i
			for j < len(rs) && (alnum(j) || (strings.ContainsRune("-'.", rs[j]) && alnum(j-1) && alnum(j+1))) {
				j++
			}
			out = append(out, string(rs[i:j]))
			i = j
		default:
			out = append(out, string(rs[i]))
			i++
		}
	}
	return out
}

// Jaccard is |A ∩ B| / |A ∪ B| of the two texts' token sets (0 when both
// are empty), as hash.py's calculate_jaccard_similarity.
func Jaccard(a, b string) float64 {
	sa, sb := map[string]bool{}, map[string]bool{}
	for _, t := range Tokens(a) {
		sa[t] = true
	}
	for _, t := range Tokens(b) {
		sb[t] = true
	}
	inter := 0
	for t := range sa {
		if sb[t] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// TFIDFCosine is the cosine of the two texts' TF-IDF vectors fitted on the
// pair alone, as hash.py's TfidfVectorizer does by default: raw counts
// times idf = ln((1 + 2) / (1 + df)) + 1, each vector L2-normalised.
func TFIDFCosine(a, b string) float64 {
	ta, tb := counts(Tokens(a)), counts(Tokens(b))
	idf := func(t string) float64 {
		df := 0
		if ta[t] > 0 {
			df++
		}
		if tb[t] > 0 {
			df++
		}
		return math.Log(3/float64(1+df)) + 1
	}
	var dot, na, nb float64
	for t, c := range ta {
		w := float64(c) * idf(t)
		na += w * w
		if d := tb[t]; d > 0 {
			dot += w * float64(d) * idf(t)
		}
	}
	for t, c := range tb {
		w := float64(c) * idf(t)
		nb += w * w
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func counts(tokens []string) map[string]int {
	m := make(map[string]int, len(tokens))
	for _, t := range tokens {
		m[t]++
	}
	return m
}

// FluencyMappings are the letter -> score mappings: v2 (the current
// leaderboard's, hash.py at 6fc8285), v1 (the December 2024 paper's,
// 10 x 3/3 .. 0/3 to six decimals: the published flexibility values are
// each a whole number plus one of these, divided by 3) and v1_hashpy (the
// same to four decimals, as hash.py at 2520c31 writes it).
var FluencyMappings = map[string]map[string]float64{
	"v2":        {"A": 10, "B": 7, "C": 4, "D": 1},
	"v1":        {"A": 10, "B": 6.666666, "C": 3.333333, "D": 0},
	"v1_hashpy": {"A": 10, "B": 6.6667, "C": 3.3333, "D": 0},
}

// mappingParam is the fluency mapping of both aggregates, declared once.
var mappingParam = stages.Param{Name: "mapping", Kind: stages.String, Default: "v2",
	Doc: `fluency letter -> score: "v2" (A 10, B 7, C 4, D 1: the current code), "v1" (A 10, B 6.666666, C 3.333333, D 0: the paper's December 2024 board, whose flexibility values it reproduces) or "v1_hashpy" (A 10, B 6.6667, C 3.3333, D 0: hash.py at 2520c31)`}

func fluencyMapping(p stages.Params) (map[string]float64, error) {
	m, ok := FluencyMappings[p.String("mapping")]
	if !ok {
		return nil, stages.ParamErrorf("mapping", `mapping = %q is not one of "v1", "v1_hashpy", "v2"`, p.String("mapping"))
	}
	return m, nil
}

// fluencyScore is a fluency output's score under mapping.
func fluencyScore(o *FluencyOutput, mapping map[string]float64) (float64, error) {
	if o.Score != nil {
		return *o.Score, nil
	}
	v, ok := mapping[o.Letter]
	if !ok {
		return 0, fmt.Errorf("fluency letter %q is not one of A, B, C, D", o.Letter)
	}
	return v, nil
}
