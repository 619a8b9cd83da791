package scholareval

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// ---- coverage ----------------------------------------------------------

type coverageType struct{}

func (coverageType) Name() string    { return "coverage" }
func (coverageType) Version() string { return "2" } // 2: the authors' request (plan, system prompt, sampling), authors_parse
func (coverageType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Accepts: []string{"dataset"}, Doc: "the ScholarIdeas dataset whose rubric lines are judged"},
		{Name: "reviews", Kind: stages.Inputs, Required: true, Accepts: []string{"soundness_review", "contribution_review", "llm_review"},
			Doc: "the reviews of one system; an idea's reviews are judged together (ScholarEval: its soundness and contribution reviews)"},
		{Name: "judge", Kind: stages.ModelRef, Required: true, Doc: "the judge (the paper: Prometheus-Eval with a GPT-4 backbone; coverage.py: openai/gpt-4o)"},
		// A bool, not a choice of strings: coverage of a retrieval review is
		// laid out only once the reviews are final, too late for validate
		// to catch a misspelt value.
		{Name: "prometheus", Kind: stages.Bool, Default: true, Doc: `the judge answers in Prometheus' format, "(feedback) [RESULT] N" (the authors'), read by a strict parse (a judgment without a score fails) with authors_parse beside it, what prometheus-eval's parser reads; false: the prompt is followed by the "Rating: N" instructions and a malformed answer is re-asked (what the mock provider answers; no authors_parse)`},
		{Name: "prompt", Kind: stages.Template, Default: DefaultCoveragePrompt, Doc: "the judge prompt (data: .Plan (the idea) .Review .Statement .Type .Axis .Severity); the default is the authors' request: prometheus-eval's ABSOLUTE_PROMPT with coverage.py's instruction and rubric"},
		{Name: "system", Kind: stages.Template, Default: DefaultCoverageSystem, Doc: `the system message before the prompt (prometheus-eval's ABS_SYSTEM_PROMPT); "" sends none`},
		{Name: "sampling", Kind: stages.String, Default: SamplingPrometheus, Doc: `"prometheus-eval": temperature 1.0, top_p 0.9, max_tokens 1024, the library defaults the authors' call kept, in place of the judge model block's; "model": the judge model block's own settings`},
		{Name: "max_rubric", Kind: stages.Int, Default: 100, Min: 1, Max: 10000, Doc: "at most this many rubric lines per idea; an idea with more fails, naming the count"},
	}
}

// Sampling settings of coverage's judge requests.
const (
	SamplingPrometheus = "prometheus-eval" // the library's defaults (see PrometheusTemperature)
	SamplingModel      = "model"           // the judge model block's
)

// CoverageOutput is one (idea, rubric line, system) judgment.
type CoverageOutput struct {
	Idea      string `json:"idea"`
	Domain    string `json:"domain"`
	Index     int    `json:"index"` // the rubric line's position in the idea's rubric, from 0
	Statement string `json:"statement"`
	Type      string `json:"type"`
	Axis      string `json:"axis"`
	Severity  string `json:"severity"`
	Score     int    `json:"score"` // 1-5, ideaflow's strict parse
	Feedback  string `json:"feedback"`
	// AuthorsParse is what the authors' parser reads from the same answer
	// (Prometheus format only): a compatibility reading, never the score.
	AuthorsParse *CoverageAuthorsParse `json:"authors_parse,omitempty"`
}

// CoverageAuthorsParse is the strict parse's shape as prometheus-eval's
// parser fills it (format.CompatPrometheusAbsolute), and the code it
// follows. Score is nil where it reads none: the authors' code would have
// sent the request again (up to 10 times) and scored that answer instead.
type CoverageAuthorsParse struct {
	Score    *int   `json:"score"`
	Feedback string `json:"feedback"` // what it returns: the whole answer
	Parser   string `json:"parser"`
}

func authorsParse(text string) *CoverageAuthorsParse {
	p := &CoverageAuthorsParse{Parser: format.CompatPrometheusParser}
	if score, feedback, ok := format.CompatPrometheusAbsolute(text); ok {
		p.Score, p.Feedback = &score, feedback
	}
	return p
}

type coverageData struct {
	Plan, Review                    string
	Statement, Type, Axis, Severity string
}

func (coverageType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	ideas, err := stages.RequireInput(p, "ideas")
	if err != nil {
		return nil, err
	}
	reviews := p.Inputs("reviews")
	if len(reviews) == 0 {
		return nil, stages.ParamErrorf("reviews", "reviews is required: the review stages of one system")
	}
	for _, r := range reviews {
		if r.Source != ideas {
			src := "none"
			if r.Source != nil {
				src = r.Source.Address
			}
			return nil, stages.ParamErrorf("reviews", "%s reviews the ideas of %s, not %s", r.Address, src, ideas.Address)
		}
	}
	if _, err := requireModel(p, "judge"); err != nil {
		return nil, err
	}
	return nil, (coverageType{}).CheckParams(inst)
}

// CheckParams renders the prompts on sample data and checks sampling: a
// coverage over several review stages is laid out only once they all have
// run.
func (coverageType) CheckParams(inst *stages.Instance) error {
	p := inst.Params
	sample := coverageData{"p", "r", "s", "t", "a", "v"}
	if _, err := stages.RenderParam("prompt", inst.Address+" prompt", p.String("prompt"), sample); err != nil {
		return err
	}
	if _, err := stages.RenderParam("system", inst.Address+" system", p.String("system"), sample); err != nil {
		return err
	}
	if s := p.String("sampling"); s != SamplingPrometheus && s != SamplingModel {
		return stages.ParamErrorf("sampling", "sampling = %q: use %q (the authors' temperature 1.0, top_p 0.9, max_tokens 1024) or %q (the judge model block's settings)", s, SamplingPrometheus, SamplingModel)
	}
	return nil
}

// judgeRequest is one judgment's request: the system message (when
// given) and the prompt, with prometheus-eval's sampling in place of the
// model block's unless sampling = "model". In Prometheus format the prompt
// is sent as rendered, its trailing space included, as the authors' is.
func judgeRequest(judge *stages.Model, system, prompt string, prometheus bool, sampling string) llm.Request {
	spec := format.Spec{Kind: format.Text}
	content := prompt
	if !prometheus {
		spec = format.Spec{Kind: format.Rating, Min: 1, Max: 5}
		content = stages.UserMessage(prompt, spec)
	}
	var msgs []llm.Message
	if strings.TrimSpace(system) != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: system})
	}
	msgs = append(msgs, llm.Message{Role: "user", Content: content})
	req := judge.Request(msgs, 0, spec)
	if sampling == SamplingPrometheus {
		t, p := PrometheusTemperature, PrometheusTopP
		req.Temperature, req.TopP, req.MaxTokens = &t, &p, PrometheusMaxTokens
	}
	return req
}

func (coverageType) ExpandInputs() []string               { return []string{"ideas"} }
func (coverageType) MaxPerItem(inst *stages.Instance) int { return inst.Params.Int("max_rubric") }

// Expand lays out one judgment per rubric line, over the idea's reviews:
// each depends on the item's review nodes (what it judges) and carries its
// rubric line in its request.
func (coverageType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	if len(in) != 1 || in[0].Output == nil {
		return nil, fmt.Errorf("item %q has no record", item)
	}
	rec, err := decodeIdea(in[0])
	if err != nil {
		return nil, err
	}
	p := inst.Params
	if max := p.Int("max_rubric"); len(rec.Rubric) > max {
		return nil, stages.ParamErrorf("max_rubric", "item %q has %d rubric lines, more than max_rubric = %d", item, len(rec.Rubric), max)
	}
	var deps []stages.Dep
	off := 0
	for _, r := range p.Inputs("reviews") {
		for _, k := range r.ItemNodes(item) {
			deps = append(deps, stages.Dep{Input: "reviews", Index: off + k})
		}
		off += len(r.Nodes)
	}
	judge, prompt, name, prometheus := p.Model("judge"), p.String("prompt"), inst.Address+" prompt", p.Bool("prometheus")
	system, sampling := p.String("system"), p.String("sampling")
	plan := strings.TrimSpace(rec.Idea) // coverage.py strips the plan file
	labels := map[string]int{}
	var nodes []stages.Node
	for i, line := range rec.Rubric {
		l := label("r", line, rec.Domain) // the reviews it judges are deps
		if labels[l]++; labels[l] > 1 {
			l += "-" + strconv.Itoa(labels[l]) // the same statement twice in one rubric
		}
		out := CoverageOutput{Idea: item, Domain: rec.Domain, Index: i, Statement: line.Statement, Type: line.Type, Axis: line.Axis, Severity: line.Severity}
		// Slot i+1: slot 0 is left to the node the engine lays out when
		// the item's expansion fails, so coverage_score can tell the two.
		nodes = append(nodes, stages.Node{Item: item, Slot: i + 1, Label: l, Deps: deps,
			Prepare: func(in []stages.In) (*stages.Work, error) {
				text, err := reviewText(in)
				if err != nil {
					return nil, err
				}
				data := coverageData{plan, text, out.Statement, out.Type, out.Axis, out.Severity}
				prompt, err := stages.RenderParam("prompt", name, prompt, data)
				if err != nil {
					return nil, err
				}
				sys, err := stages.RenderParam("system", inst.Address+" system", system, data)
				if err != nil {
					return nil, err
				}
				req := judgeRequest(judge, sys, prompt, prometheus, sampling)
				return &stages.Work{Call: &stages.Call{Model: judge, Request: req, Output: func(a *format.Answer) ([]byte, error) {
					o := out
					if !prometheus {
						o.Score, o.Feedback = a.Rating, a.Explanation
						return stages.EncodeOutput(o)
					}
					// Prometheus' own output format: no format instructions appended.
					score, feedback, err := ParseResult(a.Text)
					if err != nil {
						return nil, err
					}
					o.Score, o.Feedback, o.AuthorsParse = score, feedback, authorsParse(a.Text)
					return stages.EncodeOutput(o)
				}}}, nil
			}})
	}
	return nodes, nil
}

// reviewText joins an idea's reviews under their kind.
func reviewText(in []stages.In) (string, error) {
	var parts []string
	for _, x := range in {
		var r Review
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return "", fmt.Errorf("decode review from %s: %w", x.From.Address, err)
		}
		if r.Dropped {
			continue // the idea was dropped upstream: no review to cover
		}
		title := map[string]string{"soundness": "Soundness review", "contribution": "Contribution review", "llm": "Review"}[r.Kind]
		parts = append(parts, "# "+title+"\n\n"+strings.TrimSpace(r.Text))
	}
	return strings.Join(parts, "\n\n"), nil
}

var (
	// Fallbacks, last match wins: "Result: 4", "Score: 4", "Rating: 4/5".
	resultLabel = regexp.MustCompile(`(?i)\b(?:result|score|rating)\s*[:=]\s*\**\s*([1-5])(?:\s*/\s*5)?\b`)
	// A last line that is only the score: "4", "**4**", "(4)".
	resultBare = regexp.MustCompile(`^[\s*(\[]*([1-5])[\s*)\].]*$`)
	// "[RESULT] 4", "[RESULT]: 4", "[Result] (4)", "[RESULT] 4/5",
	// "[RESULT] **4**", "[SCORE] 4"; the number is read whole, so
	// "[RESULT] 3.5" and "[RESULT] 7" are errors, never another number
	// nearby.
	resultTag = regexp.MustCompile(`(?i)\[\s*(?:result|score)\s*\]\s*[:=]?\s*\**\s*[(\[]?\s*\**\s*(-?\d+(?:\.\d+)?)`)
)

// ParseResult reads a Prometheus-style judgment, ideaflow's strict parse:
// the score after the last "[RESULT]" (or "[SCORE]"), else after the last
// "Result:"/"Score:"/"Rating:" label, else a last line holding only a
// number 1-5. The feedback is the text before the score, without a
// leading "Feedback:". Where it reads otherwise than the authors' parser
// (format.CompatPrometheusAbsolute) is in
// ../format/testdata/prometheus_compat.json.
func ParseResult(text string) (int, string, error) {
	text = strings.TrimSpace(text)
	cut := func(at int) string {
		f := strings.TrimSpace(text[:at])
		f = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(f, "Feedback:"), "feedback:"))
		return f
	}
	if ms := resultTag.FindAllStringSubmatchIndex(text, -1); len(ms) > 0 {
		m := ms[len(ms)-1]
		num := text[m[2]:m[3]]
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > 5 {
			return 0, "", fmt.Errorf("[RESULT] %s is not a whole number from 1 to 5", num)
		}
		return n, cut(m[0]), nil
	}
	if ms := resultLabel.FindAllStringSubmatchIndex(text, -1); len(ms) > 0 {
		m := ms[len(ms)-1]
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		return n, cut(m[0]), nil
	}
	lines := strings.Split(text, "\n")
	if m := resultBare.FindStringSubmatch(lines[len(lines)-1]); m != nil && len(lines) > 0 {
		n, _ := strconv.Atoi(m[1])
		return n, cut(len(text) - len(lines[len(lines)-1])), nil
	}
	return 0, "", fmt.Errorf("found no score: the judgment must end with \"[RESULT] N\", N a whole number from 1 to 5")
}

// ---- coverage_score ----------------------------------------------------

type coverageScoreType struct{}

func (coverageScoreType) Name() string    { return "coverage_score" }
func (coverageScoreType) Version() string { return "3" } // 2: bootstrap intervals over ideas; 3: the authors' parse beside
func (coverageScoreType) Params() []stages.Param {
	return []stages.Param{
		{Name: "coverage", Kind: stages.Input, Required: true, Accepts: []string{"coverage"}, Doc: "the coverage judgments to average"},
		{Name: "resamples", Kind: stages.Int, Default: stats.DefaultResamples, Min: 0, Max: 100000, Doc: "bootstrap resamples of the ideas for each mean's confidence interval (0: none)"},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: 0, Max: math.MaxInt32, Doc: "seed of the resampling; the same seed gives the same intervals"},
		{Name: "confidence", Kind: stages.Number, Default: stats.DefaultLevel, Doc: "confidence level of the intervals, in (0, 1)"},
		{Name: "groups", Kind: stages.StringList, Default: groupKinds, Doc: "which means to give, by kind: \"overall\", \"domain\" (each discipline), \"axis\", \"type\", \"severity\" (each value); the paper's main table is [\"overall\", \"domain\"], its breakdowns [\"axis\", \"type\", \"severity\"]. Not key material: a group's mean is the same whichever others are given"},
	}
}

// groupKinds are the kinds of group coverage_score can give, in the order
// it lays them out.
var groupKinds = []string{"overall", "domain", "axis", "type", "severity"}

// selectedKinds reads the groups param: the kinds to give, each known.
func selectedKinds(p stages.Params) (map[string]bool, error) {
	want := map[string]bool{}
	for _, k := range p.Strings("groups") {
		if !slices.Contains(groupKinds, k) {
			return nil, stages.ParamErrorf("groups", "unknown group kind %q: use some of %s", k, strings.Join(groupKinds, ", "))
		}
		want[k] = true
	}
	if len(want) == 0 {
		return nil, stages.ParamErrorf("groups", "groups is empty: give at least one of %s", strings.Join(groupKinds, ", "))
	}
	return want, nil
}

// kindOf is the kind of a group name: "domain" for "domain=ai".
func kindOf(name string) string {
	kind, _, _ := strings.Cut(name, "=")
	return kind
}

// ciOptions are a coverage_score instance's bootstrap settings; nil when it
// computes no intervals.
func ciOptions(p stages.Params) (*stats.Options, error) {
	if p.Int("resamples") == 0 {
		return nil, nil
	}
	if c := p.Number("confidence"); !(c > 0 && c < 1) {
		return nil, stages.ParamErrorf("confidence", "confidence = %v must be in (0, 1), e.g. 0.95", c)
	}
	return &stats.Options{Resamples: p.Int("resamples"), Seed: uint64(p.Int("seed")), Level: p.Number("confidence")}, nil
}

// clusterCI is the bootstrap interval of the mean coverage over rubric
// lines, resampling ideas rather than lines: an idea's lines are judged
// against one review and are not independent of each other, so drawing
// lines alone would make the interval too narrow. Each resample draws as
// many ideas as were judged, with replacement, and pools their lines.
func clusterCI(byIdea map[string][]float64, opts stats.Options) (stats.Interval, error) {
	ideas := make([]string, 0, len(byIdea))
	for id := range byIdea {
		ideas = append(ideas, id)
	}
	sort.Strings(ideas)
	index := make([]float64, len(ideas))
	for i := range ideas {
		index[i] = float64(i)
	}
	pooled := func(idx []float64) float64 {
		sum, n := 0.0, 0
		for _, x := range idx {
			for _, v := range byIdea[ideas[int(x)]] {
				sum += v
				n++
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return sum / float64(n)
	}
	return stats.Bootstrap(index, pooled, opts)
}

// group is one subset of rubric lines a mean is reported for.
type group struct {
	name  string // "overall", "domain=ai", "axis=soundness", ...
	match func(item string, l datasets.RubricLine) bool
}

// groups lists the subsets: overall, each discipline (the item ids' domain
// prefix, which format scholarideas guarantees), then each axis, type and
// severity value.
func groups(items []string) []group {
	gs := []group{{"overall", func(string, datasets.RubricLine) bool { return true }}}
	var domains []string
	seen := map[string]bool{}
	for _, it := range items {
		if d := domainOf(it); !seen[d] {
			seen[d] = true
			domains = append(domains, d)
		}
	}
	sort.Strings(domains)
	for _, d := range domains {
		d := d
		gs = append(gs, group{"domain=" + d, func(item string, _ datasets.RubricLine) bool { return domainOf(item) == d }})
	}
	for _, v := range datasets.RubricAxes {
		v := v
		gs = append(gs, group{"axis=" + v, func(_ string, l datasets.RubricLine) bool { return l.Axis == v }})
	}
	for _, v := range datasets.RubricTypes {
		v := v
		gs = append(gs, group{"type=" + v, func(_ string, l datasets.RubricLine) bool { return l.Type == v }})
	}
	for _, v := range datasets.RubricSeverities {
		v := v
		gs = append(gs, group{"severity=" + v, func(_ string, l datasets.RubricLine) bool { return l.Severity == v }})
	}
	return gs
}

func domainOf(item string) string {
	if i := strings.LastIndex(item, "_"); i > 0 {
		return item[:i]
	}
	return item
}

// Layout lays out one Score per group. Each depends on every judgment and
// on every idea's record, so a judgment that failed is still attributed to
// its group (through its rubric line) and counted as missing there.
// per_item maps "idea#line" to the judgment, for a bootstrap over lines.
// Where the judgments carry authors_parse (Prometheus format), extra
// "authors" is the mean the authors' parser reads of the same judgments
// (over those it reads) and "authors_unread" how many it reads none of.
func (coverageScoreType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	up, err := stages.RequireInput(inst.Params, "coverage")
	if err != nil {
		return nil, err
	}
	src := up.Source
	if src == nil {
		return nil, stages.ParamErrorf("coverage", "coverage (%s) has no source dataset", up.Address)
	}
	deps := stages.AllDeps("coverage", up)
	nj := len(deps)
	items := src.Items()
	for _, item := range items {
		r, err := oneNode("coverage", src, item)
		if err != nil {
			return nil, err
		}
		deps = append(deps, stages.Dep{Input: src.Address, Index: r})
	}
	ci, err := ciOptions(inst.Params)
	if err != nil {
		return nil, err
	}
	want, err := selectedKinds(inst.Params)
	if err != nil {
		return nil, err
	}
	var nodes []stages.Node
	for i, g := range groups(items) {
		if !want[kindOf(g.name)] {
			// Its slot stays unused, so a group's node (keyed by its slot)
			// is the same whichever others are selected: two instances
			// that split the groups share the cache with one that has all.
			continue
		}
		g := g
		nodes = append(nodes, stages.Node{Slot: i, Label: g.name, Deps: deps, AllowMissing: true,
			Prepare: func(in []stages.In) (*stages.Work, error) {
				return &stages.Work{KeyParams: []string{"resamples", "seed", "confidence"}, Compute: func() ([]byte, error) { return coverageScore(g, in[:nj], in[nj:], ci) }}, nil
			}})
	}
	return nodes, nil
}

func coverageScore(g group, judged, records []stages.In, ci *stats.Options) ([]byte, error) {
	rubric := map[string][]datasets.RubricLine{}
	for _, r := range records {
		if r.Output == nil {
			continue
		}
		rec, err := decodeIdea(r)
		if err != nil {
			return nil, err
		}
		rubric[r.Node.Item] = rec.Rubric
	}
	s := stages.Score{PerItem: map[string]float64{}}
	byIdea := map[string][]float64{} // the judged lines of each idea, for the interval
	sum := 0
	authorsSum, authorsRead, authorsParsed := 0, 0, 0 // the authors' parse of the same judgments
	for _, j := range judged {
		item, lines := j.Node.Item, rubric[j.Node.Item]
		if j.Node.Slot == 0 {
			// The item's expansion failed: every line of it is missing.
			for _, l := range lines {
				if g.match(item, l) {
					s.Missing++
				}
			}
			continue
		}
		idx := j.Node.Slot - 1
		if idx >= len(lines) {
			return nil, fmt.Errorf("judgment %s#%d has no rubric line", item, idx)
		}
		if !g.match(item, lines[idx]) {
			continue
		}
		if j.Output == nil {
			s.Missing++
			continue
		}
		var c CoverageOutput
		if err := json.Unmarshal(j.Output, &c); err != nil {
			return nil, fmt.Errorf("decode coverage judgment: %w", err)
		}
		s.Count++
		sum += c.Score
		s.PerItem[item+"#"+strconv.Itoa(idx)] = float64(c.Score)
		byIdea[item] = append(byIdea[item], float64(c.Score))
		if c.AuthorsParse != nil {
			authorsParsed++
			if c.AuthorsParse.Score != nil {
				authorsSum += *c.AuthorsParse.Score
				authorsRead++
			}
		}
	}
	if s.Count > 0 {
		s.Value = float64(sum) / float64(s.Count)
	}
	if authorsParsed > 0 {
		// What the authors' parser reads of the same answers: its mean over
		// the judgments it reads, and how many it does not (their code
		// would have asked those again).
		if s.Extra == nil {
			s.Extra = map[string]float64{}
		}
		if authorsRead > 0 {
			s.Extra["authors"] = float64(authorsSum) / float64(authorsRead)
		}
		s.Extra["authors_unread"] = float64(authorsParsed - authorsRead)
	}
	if ci != nil && s.Count > 0 {
		iv, err := clusterCI(byIdea, *ci)
		if err != nil {
			return nil, fmt.Errorf("bootstrap %s: %w", g.name, err)
		}
		if s.Extra == nil {
			s.Extra = map[string]float64{}
		}
		for k, v := range map[string]float64{"ci_low": iv.Lower, "ci_high": iv.Upper, "ci_level": iv.Level,
			"resamples": float64(ci.Resamples), "ideas": float64(len(byIdea))} {
			s.Extra[k] = v
		}
	}
	return stages.EncodeOutput(s)
}
