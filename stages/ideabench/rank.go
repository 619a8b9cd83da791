package ideabench

import (
	"fmt"
	"math"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// maxPermutations bounds the rankings per target: each is one judge call
// per target, and a position-bias control needs a handful.
const maxPermutations = 100

type rankType struct{}

func (rankType) Name() string { return "rank_ideas" }

// Version stays 1: an ideaflow-style request is the request it was, and
// keeps its cached ranking. Outputs gained authors_parse; one cached
// before it has none, and insight_score with parse = "authors" counts it
// missing.
func (rankType) Version() string { return "1" }

func (rankType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Accepts: []string{"generate_ideas"}, Doc: "the generated ideas of each target"},
		{Name: "judge", Kind: stages.ModelRef, Required: true, Doc: "the model that ranks"},
		{Name: "quality", Kind: stages.QualityRef, Required: true, Doc: "the quality indicator to rank by"},
		{Name: "permutations", Kind: stages.Int, Default: 1, Min: 1, Max: maxPermutations, Doc: "rankings per target, each with its own letter order (position-bias control)"},
		{Name: "order", Kind: stages.String, Default: "shuffle", Doc: `"shuffle" (seeded letter order per permutation), "target_first" (the original code's fixed order; needs permutations = 1), "target_last" (the ideas in order, then the target; needs permutations = 1) or "rotate" (ideas in order, the target at position p+1 in permutation p, so once at every position; needs permutations = n+1)`},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: math.MinInt32, Max: math.MaxInt32, Doc: "seed of the letter shuffles"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultRankPrompt, Doc: `ranking prompt template (data: .Quality .Ideas .Letters .N); left at this default, prompt_style = "authors" sends the authors' prompt instead`},
		{Name: "prompt_style", Kind: stages.String, Default: "ideaflow", Doc: `"ideaflow" (the prompt with the quality's definition, then instructions asking for a "Ranking: C > A > ..." line) or "authors" (the authors' prompt of llm_ranking_eval.py at 9dbd125, which names the quality and asks for "1. Hypothesis X: rationale" lines, sent alone); either way the answer is parsed strictly, and authors_parse holds what the authors' parser reads`},
		{Name: "target", Kind: stages.Input, Doc: `a stage whose item output has an "idea" or "abstract" field; default: the dataset record's idea, else its abstract`},
	}
}

// RankData is the template data of the rank_ideas prompt.
type RankData struct {
	Quality Quality
	Ideas   []Candidate
	Letters string
	N       int
}

// Quality is the quality indicator as templates see it.
type Quality struct{ Name, Definition string }

// Candidate is one lettered idea in the ranking prompt.
type Candidate struct{ Letter, Text string }

// RankOutput is a rank_ideas node's output.
type RankOutput struct {
	Order        []string          `json:"order"`  // letters, best first
	Labels       map[string]string `json:"labels"` // letter -> "target" or "idea I" (I: index into the item's ideas)
	TargetLetter string            `json:"target_letter"`
	TargetRank   int               `json:"target_rank"` // 1..N+1
	N            int               `json:"n"`           // generated ideas ranked
	Dropped      bool              `json:"dropped,omitempty"`
	// AuthorsParse is what the authors' parser reads from the same answer
	// (their first, before any re-ask): not the strict parse above.
	AuthorsParse *AuthorsRanking `json:"authors_parse,omitempty"`
}

// AuthorsRanking is the authors' reading of a ranking answer
// (format.IdeaBenchRanking): the letters their regular expressions find,
// in order, repeats included; the target's rank is 1 + the index of its
// letter's first occurrence (0: not found, and their analysis leaves the
// target out), and N is len(Order) - 1, the denominator of their relative
// rank (TargetRank-1)/N, which equals the paper's n only when the parse
// found every letter once.
type AuthorsRanking struct {
	Order        []string `json:"order"`
	TargetLetter string   `json:"target_letter"`
	TargetRank   int      `json:"target_rank"`
	N            int      `json:"n"`
	// Error says why the authors' code would have recorded no ranking at
	// all for these texts (their prompt template could not be formatted).
	Error  string `json:"error,omitempty"`
	Parser string `json:"parser"`
}

// authorsRanking reads a's first answer as the authors' code does; nil
// when the answer's text is not known (stored before answers kept it).
// templateErr is authorsTemplateError of the candidates' texts.
func authorsRanking(a *format.Answer, targetLetter, templateErr string) *AuthorsRanking {
	text, known := a.Unrepaired()
	if !known {
		return nil
	}
	r := &AuthorsRanking{Order: []string{}, TargetLetter: targetLetter, Parser: format.IdeaBenchRankingParser, Error: templateErr}
	if templateErr == "" {
		r.Order = format.IdeaBenchRanking(text)
	}
	r.N = max(len(r.Order)-1, 0)
	for i, l := range r.Order {
		if l == targetLetter {
			r.TargetRank = i + 1
			break
		}
	}
	return r
}

var droppedRank = []byte(`{"dropped":true}`)

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

type ranker struct {
	judge       *stages.Model
	quality     Quality
	shuffle     bool
	order       string // the order param
	perms       int
	seed        int
	prompt      string
	promptName  string
	targetInput string
	authors     bool // prompt_style = "authors": no format instructions
}

func (rankType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	r, perms, err := newRanker(inst)
	if err != nil {
		return nil, err
	}
	ideas, err := stages.RequireInput(inst.Params, "ideas")
	if err != nil {
		return nil, err
	}
	// The target text comes from the target stage when given, else from the
	// dataset the ideas were generated for. A dataset dep is named by the
	// dataset's address: it is no param of this stage.
	target := inst.Params.Input("target")
	r.targetInput = "target"
	if target == nil {
		if ideas.Source == nil {
			return nil, stages.ParamErrorf("ideas", "ideas (%s) has no source dataset to take target ideas from; set target", ideas.Address)
		}
		target = ideas.Source
		r.targetInput = target.Address
	}
	// A bad target node count is the fault of whichever param supplies the
	// target: target itself, else ideas (through its source dataset).
	targetParam := "target"
	if r.targetInput != "target" {
		targetParam = "ideas"
	}
	labels := make([]string, perms)
	prepares := make([]func([]stages.In) (*stages.Work, error), perms)
	for p := range prepares {
		labels[p] = fmt.Sprintf("perm %d", p)
		prepares[p] = r.prepare(p)
	}
	items := ideas.Items()
	nodes := make([]stages.Node, 0, len(items)*perms)
	for _, item := range items {
		tn := target.ItemNodes(item)
		if len(tn) != 1 {
			return nil, stages.ParamErrorf(targetParam, "target (%s) has %d nodes for item %q; need exactly one", target.Address, len(tn), item)
		}
		idx := ideas.ItemNodes(item)
		// Independent samples are one node each, so too many ideas to letter
		// are known now; batch answers are checked when they arrive.
		if len(idx) >= len(letters) {
			return nil, stages.ParamErrorf("ideas", "ideas gives %d ideas per target; a ranking letters the target and the ideas A-Z, so n can be at most %d", len(idx), len(letters)-1)
		}
		// Independent samples (more than one node) give n now; a batch
		// node's n is checked when its answer arrives (rotateOrder).
		if r.order == "rotate" && len(idx) > 1 && perms != len(idx)+1 {
			return nil, stages.ParamErrorf("permutations", `order = "rotate" ranks once per position of the target: with %d ideas per target permutations must be %d (got %d)`, len(idx), len(idx)+1, perms)
		}
		deps := make([]stages.Dep, 0, len(idx)+1)
		for _, i := range idx {
			deps = append(deps, stages.Dep{Input: "ideas", Index: i})
		}
		deps = append(deps, stages.Dep{Input: r.targetInput, Index: tn[0]})
		for p := 0; p < perms; p++ {
			nodes = append(nodes, stages.Node{Item: item, Slot: p, Label: labels[p], Deps: deps, Prepare: prepares[p]})
		}
	}
	return nodes, nil
}

func newRanker(inst *stages.Instance) (*ranker, int, error) {
	p := inst.Params
	r := &ranker{
		judge:      p.Model("judge"),
		seed:       p.Int("seed"),
		prompt:     p.String("prompt"),
		promptName: inst.Address + " prompt",
	}
	q := p.Quality("quality")
	switch {
	case r.judge == nil:
		return nil, 0, stages.ParamErrorf("judge", "judge is required")
	case q == nil:
		return nil, 0, stages.ParamErrorf("quality", "quality is required")
	}
	r.quality = Quality{Name: q.Name, Definition: strings.TrimSpace(q.Definition)}
	style := p.String("prompt_style")
	if err := oneOf("prompt_style", style, "ideaflow", "authors"); err != nil {
		return nil, 0, err
	}
	if r.authors = style == "authors"; r.authors && r.prompt == DefaultRankPrompt {
		r.prompt = AuthorsRankPrompt
	}
	order := p.String("order")
	if err := oneOf("order", order, "shuffle", "target_first", "target_last", "rotate"); err != nil {
		return nil, 0, err
	}
	r.shuffle, r.order = order == "shuffle", order
	perms := p.Int("permutations")
	if perms < 1 {
		return nil, 0, stages.ParamErrorf("permutations", "permutations = %d must be at least 1", perms)
	}
	if (order == "target_first" || order == "target_last") && perms != 1 {
		return nil, 0, stages.ParamErrorf("permutations", `order = %q always gives the same letter order, so permutations must be 1 (got %d)`, order, perms)
	}
	if order == "rotate" && perms < 2 {
		// One ranking per position of the target: with at least one idea
		// that is at least two.
		return nil, 0, stages.ParamErrorf("permutations", `order = "rotate" ranks once per position of the target, so permutations must be n+1, the ideas per target plus one (got %d)`, perms)
	}
	sample := &RankData{Quality: r.quality, Ideas: []Candidate{{"A", "x"}, {"B", "y"}}, Letters: "AB", N: 1}
	if _, err := stages.RenderParam("prompt", r.promptName, r.prompt, sample); err != nil {
		return nil, 0, err
	}
	r.perms = perms
	return r, perms, nil
}

// candidate is one idea to rank and what it is.
type candidate struct {
	label string // "target" or "idea I"
	text  string
}

// prepare ranks an item under permutation p. in holds the item's ideas
// nodes in sample order, then the target node; the item is theirs.
func (r *ranker) prepare(p int) func(in []stages.In) (*stages.Work, error) {
	return func(in []stages.In) (*stages.Work, error) {
		ideaIns, targetIn := in[:len(in)-1], in[len(in)-1]
		item := targetIn.Node.Item
		cands := []candidate{{label: "target"}}
		for _, x := range ideaIns {
			ideas, isDropped, err := decodeIdeas(x.Output)
			if err != nil {
				return nil, fmt.Errorf("decode ideas of %q: %w", item, err)
			}
			if isDropped {
				return dropped(droppedRank, "ideas"), nil
			}
			for _, idea := range ideas {
				cands = append(cands, candidate{label: fmt.Sprintf("idea %d", len(cands)-1), text: idea})
			}
		}
		text, err := targetText(targetIn)
		if err != nil {
			return nil, fmt.Errorf("target of %q: %w", item, err)
		}
		cands[0].text = text
		n := len(cands) - 1
		if n == 0 {
			return nil, fmt.Errorf("item %q has no generated ideas to rank", item)
		}
		if len(cands) > len(letters) {
			return nil, fmt.Errorf("item %q has %d candidates; rankings use letters A-Z, so at most %d ideas", item, len(cands), len(letters)-1)
		}
		order, err := r.letterOrder(item, p, len(cands))
		if err != nil {
			return nil, err
		}
		data := &RankData{Quality: r.quality, Letters: letters[:len(cands)], N: n, Ideas: make([]Candidate, len(cands))}
		labels := make(map[string]string, len(cands))
		targetLetter := ""
		for i, c := range order {
			l := letters[i : i+1]
			data.Ideas[i] = Candidate{Letter: l, Text: cands[c].text}
			labels[l] = cands[c].label
			if c == 0 {
				targetLetter = l
			}
		}
		prompt, err := stages.RenderParam("prompt", r.promptName, r.prompt, data)
		if err != nil {
			return nil, err
		}
		spec := format.Spec{Kind: format.Ranking, Letters: data.Letters}
		content := stages.UserMessage(prompt, spec)
		if r.authors {
			content = prompt // as the authors send it: no instructions, not trimmed
			spec.Style = format.StyleHypothesisList
		}
		texts := make([]string, len(cands))
		for i, c := range cands {
			texts[i] = c.text
		}
		templateErr := authorsTemplateError(texts)
		msgs := []llm.Message{{Role: "user", Content: content}}
		return &stages.Work{Call: &stages.Call{
			Model: r.judge,
			// The permutation index is the sample index: two permutations that
			// happen to draw the same order stay two independent rankings.
			Request: r.judge.Request(msgs, p, spec),
			Output: func(a *format.Answer) ([]byte, error) {
				return rankOutput(a.Ranking, labels, targetLetter, n, authorsRanking(a, targetLetter, templateErr))
			},
		}}, nil
	}
}

// rankOutput converts a parsed ranking. The parser guarantees a Ranking
// answer is every letter of the spec exactly once, in upper case, so the
// target's letter is always found; refusing a ranking here would fail the
// node where a parse error gets a repair re-ask. The one check left guards the
// benchmark against an answer that did not come from the parser: a target
// rank of 0 would otherwise be recorded as data.
func rankOutput(ranking []string, labels map[string]string, targetLetter string, n int, authors *AuthorsRanking) ([]byte, error) {
	rank := 0
	for i, l := range ranking {
		if l == targetLetter {
			rank = i + 1
			break
		}
	}
	if rank == 0 {
		return nil, fmt.Errorf("ranking %s lacks the target's letter %s, which the ranking parser guarantees (an internal error)", strings.Join(ranking, " > "), targetLetter)
	}
	return stages.EncodeOutput(RankOutput{Order: ranking, Labels: labels, TargetLetter: targetLetter, TargetRank: rank, N: n, AuthorsParse: authors})
}

// letterOrder returns the candidate shown under each letter in ranking p of
// k candidates (candidate 0 is the target, then the ideas in sample order).
func (r *ranker) letterOrder(item string, p, k int) ([]int, error) {
	switch r.order {
	case "shuffle":
		return permutation(r.seed, item, p, k), nil
	case "target_last":
		return append(identity(k)[1:], 0), nil
	case "rotate":
		// permutations was checked against n at layout for independent
		// samples; a batch answer's n is known only now. Every ranking of
		// the item fails alike: a partial rotation would bias the mean.
		if r.perms != k {
			return nil, fmt.Errorf(`item %q has %d ideas, so order = "rotate" needs permutations = %d (got %d): set permutations = %d`, item, k-1, k, r.perms, k)
		}
		order := make([]int, 0, k)
		for i := 1; i < k; i++ {
			if i-1 == p {
				order = append(order, 0)
			}
			order = append(order, i)
		}
		if p == k-1 {
			order = append(order, 0)
		}
		return order, nil
	}
	return identity(k), nil // target_first
}

func identity(k int) []int {
	p := make([]int, k)
	for i := range p {
		p[i] = i
	}
	return p
}
