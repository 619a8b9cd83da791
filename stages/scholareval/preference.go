package scholareval

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// ---- pairwise_preference ---------------------------------------------------
//
// The paper's Table 3: a judge reads two systems' reviews of an idea as
// Report A and Report B and names the better one, or a tie, for evidence
// support, actionability and depth (evaluation/llm_metrics.py at
// skai-research/ScholarEval@b8391a0: its prompt, temperature 0 in its call,
// and each pair's order drawn at random "to reduce position bias").
// preference_score tabulates the outcomes. Every judgment keeps two
// readings: the strict parse, and the authors' (authors_parse).

// Which system is shown as Report A.
const (
	OrderRandom = "random"  // the authors': each pair in a random order (here drawn from seed and the idea)
	OrderAFirst = "a_first" // a is always Report A
	OrderBFirst = "b_first" // b is always Report A
)

type preferenceType struct{}

func (preferenceType) Name() string    { return "pairwise_preference" }
func (preferenceType) Version() string { return "1" }
func (preferenceType) Params() []stages.Param {
	reviews := []string{"soundness_review", "contribution_review", "llm_review"}
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Accepts: []string{"dataset"}, Doc: "the ideas both systems reviewed"},
		{Name: "a", Kind: stages.Inputs, Required: true, Accepts: reviews, Doc: "the reviews of the first system (ScholarEval: its soundness and contribution reviews), one report per idea"},
		{Name: "b", Kind: stages.Inputs, Required: true, Accepts: reviews, Doc: "the reviews of the system it is compared with"},
		{Name: "judge", Kind: stages.ModelRef, Required: true, Doc: "the judge (llm_metrics.py calls it at temperature 0)"},
		{Name: "system", Kind: stages.Template, Default: DefaultPreferenceSystem, Doc: `the system message (llm_metrics.py's, its run-together sentences and typos kept); "" sends none`},
		{Name: "prompt", Kind: stages.Template, Default: DefaultPreferencePrompt, Doc: "the user message (data: .ReportA .ReportB); llm_metrics.py's, whose format example has literal double braces"},
		// A bool, as coverage's prometheus: the stage is laid out only once
		// the reviews are final.
		{Name: "json_winners", Kind: stages.Bool, Default: true, Doc: `the judge answers as the authors' prompt asks, a JSON object whose winners are A, B or Tie, read by a strict parse with authors_parse beside it; false: the prompt is followed by ideaflow's instructions for fields evidence_based, actionability and depth, each 1 (Report A better), 0 (a tie) or -1 (Report B better), re-asked when malformed (what the mock provider answers; no authors_parse)`},
		{Name: "order", Kind: stages.String, Default: OrderRandom, Doc: `which system is Report A: "random" (the authors': each pair drawn at random; here from seed and the idea, recorded as swapped), "a_first" or "b_first"`},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: 0, Max: 1 << 30, Doc: `order = "random": a pair is swapped when the SHA-256 of seed (decimal), a NUL byte and the idea id is odd`},
	}
}

// PreferenceOutput is one idea's pairwise judgment, in terms of the
// systems: "a", "b" or "tie" per criterion ("" where the strict parse
// cannot read the winner).
type PreferenceOutput struct {
	Idea       string            `json:"idea"`
	Swapped    bool              `json:"swapped"` // b was shown as Report A
	Winners    map[string]string `json:"winners"`
	Rationales map[string]string `json:"rationales"`
	// AuthorsParse is what the authors' parser reads from the same answer,
	// the swap undone as theirs undoes it: "a", "b", "tie" or "unclear"
	// (json_winners only).
	AuthorsParse *PreferenceAuthorsParse `json:"authors_parse,omitempty"`
}

// PreferenceAuthorsParse is the strict parse's shape as the authors' code
// fills it (format.CompatScholarEvalPreference), and the code it follows.
type PreferenceAuthorsParse struct {
	Winners map[string]string `json:"winners"`
	Parser  string            `json:"parser"`
}

type preferenceData struct{ ReportA, ReportB string }

// CheckParams renders the prompts on sample data and checks order: the
// stage is laid out only once both systems' reviews are final.
func (preferenceType) CheckParams(inst *stages.Instance) error {
	p := inst.Params
	for _, name := range []string{"prompt", "system"} {
		if _, err := stages.RenderParam(name, inst.Address+" "+name, p.String(name), preferenceData{"a", "b"}); err != nil {
			return err
		}
	}
	switch o := p.String("order"); o {
	case OrderRandom, OrderAFirst, OrderBFirst:
	default:
		return stages.ParamErrorf("order", "order = %q: use %q (the authors'), %q or %q", o, OrderRandom, OrderAFirst, OrderBFirst)
	}
	return nil
}

func (preferenceType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	ideas, err := stages.RequireInput(p, "ideas")
	if err != nil {
		return nil, err
	}
	judge, err := requireModel(p, "judge")
	if err != nil {
		return nil, err
	}
	if err := (preferenceType{}).CheckParams(inst); err != nil {
		return nil, err
	}
	a, b := p.Inputs("a"), p.Inputs("b")
	for _, side := range []struct {
		name string
		ups  []*stages.Upstream
	}{{"a", a}, {"b", b}} {
		if len(side.ups) == 0 {
			return nil, stages.ParamErrorf(side.name, "%s is required: the review stages of one system", side.name)
		}
		for _, r := range side.ups {
			if r.Source != ideas {
				return nil, stages.ParamErrorf(side.name, "%s reviews other ideas than %s", r.Address, ideas.Address)
			}
		}
	}
	deps := func(param string, ups []*stages.Upstream, item string) []stages.Dep {
		var out []stages.Dep
		off := 0
		for _, r := range ups {
			for _, k := range r.ItemNodes(item) {
				out = append(out, stages.Dep{Input: param, Index: off + k})
			}
			off += len(r.Nodes)
		}
		return out
	}
	system, prompt, order, seed, jsonWinners := p.String("system"), p.String("prompt"), p.String("order"), p.Int("seed"), p.Bool("json_winners")
	var nodes []stages.Node
	for _, item := range ideas.Items() {
		da, db := deps("a", a, item), deps("b", b, item)
		if len(da) == 0 || len(db) == 0 {
			continue // a system did not review this idea
		}
		swapped := order == OrderBFirst || order == OrderRandom && swapDraw(seed, item)
		nodes = append(nodes, stages.Node{Item: item, Deps: append(da, db...),
			Prepare: func(in []stages.In) (*stages.Work, error) {
				ra, err := reviewText(in[:len(da)])
				if err != nil {
					return nil, err
				}
				rb, err := reviewText(in[len(da):])
				if err != nil {
					return nil, err
				}
				data := preferenceData{ra, rb}
				if swapped {
					data = preferenceData{rb, ra}
				}
				user, err := stages.RenderParam("prompt", inst.Address+" prompt", prompt, data)
				if err != nil {
					return nil, err
				}
				sys, err := stages.RenderParam("system", inst.Address+" system", system, data)
				if err != nil {
					return nil, err
				}
				var msgs []llm.Message
				if strings.TrimSpace(sys) != "" {
					msgs = append(msgs, llm.Message{Role: "system", Content: sys})
				}
				spec := format.Spec{Kind: format.Text} // the prompt sets the answer's form
				if !jsonWinners {
					spec = format.Spec{Kind: format.Fields, Fields: preferenceFields, Min: -1, Max: 1}
					user = stages.UserMessage(user+"\n\n"+preferenceFieldsNote, spec)
				}
				msgs = append(msgs, llm.Message{Role: "user", Content: user})
				return &stages.Work{Call: &stages.Call{Model: judge, Request: judge.Request(msgs, 0, spec), Output: func(ans *format.Answer) ([]byte, error) {
					var out *PreferenceOutput
					var err error
					if jsonWinners {
						out, err = preference(item, ans.Text, swapped)
					} else {
						out = preferenceFromFields(item, ans.Fields, swapped)
					}
					if err != nil {
						return nil, err
					}
					return stages.EncodeOutput(out)
				}}}, nil
			}})
	}
	return nodes, nil
}

// json_winners = false: the fields asked for, one per criterion, and what
// their values mean.
var preferenceFields = []string{"evidence_based", "actionability", "depth"}

const preferenceFieldsNote = "Instead of that format, give for each criterion 1 if Report A is better, -1 if Report B is better, and 0 for a tie."

// preferenceFromFields maps json_winners = false's fields to systems.
func preferenceFromFields(item string, fields map[string]int, swapped bool) *PreferenceOutput {
	out := &PreferenceOutput{Idea: item, Swapped: swapped, Winners: map[string]string{}, Rationales: map[string]string{}}
	for i, c := range format.PreferenceCriteria {
		letter := map[int]string{1: "A", 0: "TIE", -1: "B"}[fields[preferenceFields[i]]]
		out.Winners[c] = letterToSystem(letter, swapped)
	}
	return out
}

// letterToSystem maps a report letter to the system shown under it.
func letterToSystem(letter string, swapped bool) string {
	switch letter {
	case "A", "B":
		if (letter == "A") != swapped {
			return "a"
		}
		return "b"
	case "TIE":
		return "tie"
	case "UNCLEAR":
		return "unclear"
	}
	return ""
}

// swapDraw is order = "random"'s coin for one idea.
func swapDraw(seed int, item string) bool {
	sum := sha256.Sum256([]byte(strconv.Itoa(seed) + "\x00" + item))
	return sum[31]&1 == 1
}

// preference reads a judgment both ways and maps report letters to systems.
func preference(item, text string, swapped bool) (*PreferenceOutput, error) {
	letters, rationales, err := ParsePreference(text)
	if err != nil {
		return nil, err
	}
	system := func(letter string) string { return letterToSystem(letter, swapped) }
	out := &PreferenceOutput{Idea: item, Swapped: swapped, Winners: map[string]string{}, Rationales: rationales,
		AuthorsParse: &PreferenceAuthorsParse{Winners: map[string]string{}, Parser: format.CompatPreferenceParser}}
	authors, ok := format.CompatScholarEvalPreference(text)
	for _, c := range format.PreferenceCriteria {
		out.Winners[c] = system(letters[c])
		if !ok {
			authors = map[string]string{}
		}
		w := authors[c]
		if w == "" {
			w = "UNCLEAR" // no judgment read: every criterion UNCLEAR
		}
		out.AuthorsParse.Winners[c] = system(w)
	}
	return out, nil
}

var (
	jsonFence  = regexp.MustCompile("(?s)```[A-Za-z]*\\s*(.*?)```")
	reportWord = regexp.MustCompile(`(?i)^(?:report|response)\s+`)
)

// ParsePreference is the strict parse of a pairwise judgment: the JSON
// object of the answer (the last fenced block holding one, else from the
// first "{" to the last "}"; raw newlines inside strings and stray
// backslashes repaired; an array: its first object), and per criterion
// its "<criterion>-winner" as "A", "B" or "TIE" ("" where the value is not
// A, B or Tie, give or take quotes, emphasis, a full stop or a leading
// "Report"/"Response") and its rationale. Field names are matched without
// regard to case or punctuation. An answer with no JSON object is an error.
func ParsePreference(text string) (map[string]string, map[string]string, error) {
	var candidates []string
	for _, m := range jsonFence.FindAllStringSubmatch(text, -1) {
		candidates = append([]string{m[1]}, candidates...) // the last first
	}
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		candidates = append(candidates, text[i:j+1])
	}
	var obj map[string]any
	for _, c := range candidates {
		if o := decodeObject(c); o != nil {
			obj = o
			break
		}
	}
	if obj == nil {
		return nil, nil, fmt.Errorf(`found no JSON object with the winners: the judgment must give "Evidence-based-winner", "Actionability-winner" and "Depth-winner" in a JSON object`)
	}
	field := func(name string) (any, bool) {
		want := normField(name)
		for k, v := range obj {
			if normField(k) == want {
				return v, true
			}
		}
		return nil, false
	}
	winners, rationales := map[string]string{}, map[string]string{}
	for _, c := range format.PreferenceCriteria {
		winners[c] = ""
		if v, ok := field(c + "-winner"); ok {
			if s, isStr := v.(string); isStr {
				s = strings.TrimRight(strings.Trim(strings.TrimSpace(s), `"'*_ `), ".")
				s = strings.ToUpper(reportWord.ReplaceAllString(s, ""))
				if s == "A" || s == "B" || s == "TIE" {
					winners[c] = s
				}
			}
		}
		if v, ok := field(c + "-rationale"); ok {
			if s, isStr := v.(string); isStr {
				rationales[c] = s
			}
		}
	}
	return winners, rationales, nil
}

func normField(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// decodeObject decodes s as a JSON object (an array: its first element),
// repairing what models write that JSON forbids: raw control characters
// inside strings and backslashes that start no escape.
func decodeObject(s string) map[string]any {
	var b bytes.Buffer
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && c == '\\':
			if i+1 < len(s) && strings.IndexByte(`"\/bfnrtu`, s[i+1]) >= 0 {
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i++
				continue
			}
			b.WriteString(`\\`)
			continue
		case inString && c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
			continue
		case c == '"':
			inString = !inString
		}
		b.WriteByte(c)
	}
	var v any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		return nil
	}
	if list, ok := v.([]any); ok && len(list) > 0 {
		v = list[0]
	}
	obj, _ := v.(map[string]any)
	return obj
}

// ---- preference_score --------------------------------------------------

type preferenceScoreType struct{}

func (preferenceScoreType) Name() string    { return "preference_score" }
func (preferenceScoreType) Version() string { return "1" }
func (preferenceScoreType) Params() []stages.Param {
	return []stages.Param{
		{Name: "preferences", Kind: stages.Input, Required: true, Accepts: []string{"pairwise_preference"}, Doc: "the pairwise judgments to count"},
	}
}

// PreferenceOutcomes are the outcomes preference_score reports per
// criterion, in terms of the systems.
var PreferenceOutcomes = []string{"a", "tie", "b"}

// preferenceLabel names one (criterion, outcome) score: "evidence-based=a".
func preferenceLabel(criterion, outcome string) string {
	return strings.ToLower(criterion) + "=" + outcome
}

// Layout lays out one Score per criterion and outcome: the percentage of
// the pairs the strict parse read for that criterion with that outcome
// (value; count: the pairs read; missing: failed judgments and winners it
// could not read), with extra "authors", the percentage the authors' code
// reports (over every judged pair, its UNCLEAR ones included), and
// "authors_unclear", how many pairs it counts UNCLEAR.
func (preferenceScoreType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	up, err := stages.RequireInput(inst.Params, "preferences")
	if err != nil {
		return nil, err
	}
	deps := stages.AllDeps("preferences", up)
	var nodes []stages.Node
	for _, c := range format.PreferenceCriteria {
		for _, o := range PreferenceOutcomes {
			c, o := c, o
			nodes = append(nodes, stages.Node{Slot: len(nodes), Label: preferenceLabel(c, o), Deps: deps, AllowMissing: true,
				Prepare: func(in []stages.In) (*stages.Work, error) {
					return &stages.Work{KeyParams: []string{}, Compute: func() ([]byte, error) { return preferenceScore(c, o, in) }}, nil
				}})
		}
	}
	return nodes, nil
}

func preferenceScore(criterion, outcome string, in []stages.In) ([]byte, error) {
	s := stages.Score{PerItem: map[string]float64{}, Extra: map[string]float64{}}
	hits, judged, authors, unclear := 0, 0, 0, 0 // judged: pairs with the authors' reading
	for _, x := range in {
		if x.Output == nil {
			s.Missing++
			continue
		}
		var p PreferenceOutput
		if err := json.Unmarshal(x.Output, &p); err != nil {
			return nil, fmt.Errorf("decode %s: %w", x.From.Address, err)
		}
		if p.AuthorsParse != nil {
			judged++
			switch p.AuthorsParse.Winners[criterion] {
			case outcome:
				authors++
			case "unclear":
				unclear++
			}
		}
		w := p.Winners[criterion]
		if w == "" {
			s.Missing++
			continue
		}
		s.Count++
		s.PerItem[x.Node.Item] = 0
		if w == outcome {
			hits++
			s.PerItem[x.Node.Item] = 1
		}
	}
	if s.Count > 0 {
		s.Value = 100 * float64(hits) / float64(s.Count)
	}
	if judged > 0 { // json_winners: the authors' reading of the same answers
		s.Extra["authors"] = 100 * float64(authors) / float64(judged)
		s.Extra["authors_unclear"] = float64(unclear)
	}
	return stages.EncodeOutput(s)
}
