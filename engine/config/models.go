package config

// model blocks.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

func (l *loader) evalModel(d *decl) {
	a := d.content.Attributes
	m := &stages.Model{Address: d.addr}
	if pv, pa := l.eval(a, "provider", nil); pa != nil {
		if addr, ok := refOf(pv); ok && strings.HasPrefix(addr, "provider.") {
			m.Provider = strings.TrimPrefix(addr, "provider.")
		} else {
			l.errorf(pa.Expr.Range().Ptr(), "Wrong type for provider", "provider must be a provider reference such as provider.openai.")
		}
	}
	m.Name, _ = l.str(a, "name", nil)
	m.Family, _ = l.str(a, "family", nil)
	if f, ok := l.float(a, "temperature", nil); ok && l.within(a["temperature"], f, 0, 2) {
		m.Temperature = &f
	}
	if f, ok := l.float(a, "top_p", nil); ok && l.within(a["top_p"], f, 0, 1) {
		m.TopP = &f
	}
	if n, ok := l.int(a, "max_tokens", nil); ok && l.within(a["max_tokens"], float64(n), 0, MaxModelTokens) {
		m.MaxTokens = n
	}
	if s, ok := l.int(a, "seed", nil); ok {
		m.Seed = &s
	}
	m.Stop, _ = l.strings(a, "stop", nil)
	m.JSONMode, _ = l.boolean(a, "json_mode", nil)
	if c, ok := l.str(a, "knowledge_cutoff", nil); ok && c != "" {
		if _, err := datasets.ParseDate(c); err != nil {
			l.errorf(a["knowledge_cutoff"].Expr.Range().Ptr(), "Invalid knowledge_cutoff", "knowledge_cutoff %s. It is the end of the model's training data; plan warns about targets published before it.", err)
		} else {
			m.KnowledgeCutoff = c
		}
	}
	for _, pb := range d.content.Blocks {
		pc, _ := pb.Body.Content(priceSchema)
		if pc != nil {
			for _, p := range []struct {
				name string
				dst  *float64
			}{{"input_per_mtok", &m.Price.InputPerMTok}, {"output_per_mtok", &m.Price.OutputPerMTok}} {
				if f, ok := l.float(pc.Attributes, p.name, nil); ok && l.within(pc.Attributes[p.name], f, 0, maxPricePerMTok) {
					*p.dst = f
				}
			}
			// Optional discounts: unset stays nil, so pricing tells "not
			// given" (no discount assumed) from a price of 0.
			for _, p := range []struct {
				name string
				dst  **float64
			}{{"batch_input_per_mtok", &m.Price.BatchInputPerMTok}, {"batch_output_per_mtok", &m.Price.BatchOutputPerMTok},
				{"cached_input_per_mtok", &m.Price.CachedInputPerMTok}, {"batch_cached_input_per_mtok", &m.Price.BatchCachedInputPerMTok}} {
				if f, ok := l.float(pc.Attributes, p.name, nil); ok && l.within(pc.Attributes[p.name], f, 0, maxPricePerMTok) {
					*p.dst = &f
				}
			}
			m.Priced = true
		}
	}
	l.exp.Models[d.name] = m
	l.exp.ModelRanges[d.name] = d.declRange
	optNum := func(p *float64) cty.Value {
		if p == nil {
			return cty.NullVal(cty.Number)
		}
		return cty.NumberFloatVal(*p)
	}
	l.values.ns["model"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr:            cty.StringVal(d.addr),
		"name":             cty.StringVal(m.Name),
		"family":           cty.StringVal(m.Family),
		"provider":         cty.StringVal(m.Provider),
		"temperature":      optNum(m.Temperature),
		"max_tokens":       cty.NumberIntVal(int64(m.MaxTokens)),
		"knowledge_cutoff": cty.StringVal(m.KnowledgeCutoff),
	})
}

// MaxModelTokens bounds a model's max_tokens: past every model's output
// limit (the largest are ~128k tokens), so only a typo meets it; the plan
// and --max-cost take max_tokens as each call's output, and 1e12 made every
// estimate and budget meaningless.
const MaxModelTokens = 1_000_000

// maxPricePerMTok bounds a price: USD per million tokens, past any model's.
const maxPricePerMTok = 10_000

// within reports a located error unless lo <= v <= hi: the ranges servers
// accept for sampling parameters, checked here so a typo fails at validate
// and not as a 400 on the first call.
func (l *loader) within(a *hcl.Attribute, v, lo, hi float64) bool {
	if v >= lo && v <= hi {
		return true
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	want := fmt.Sprintf("between %s and %s", num(lo), num(hi))
	if math.IsInf(hi, 1) {
		want = fmt.Sprintf("%s or more (0: the server's default)", num(lo))
	}
	l.errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "%s must be %s, got %s. Fix the value.", a.Name, want, strconv.FormatFloat(v, 'g', -1, 64))
	return false
}

// checkProviderUse reports models whose provider does not exist in this
// experiment and gives the others their provider's Answerer.
func (l *loader) checkProviderUse() {
	names := make([]string, 0, len(l.exp.Models))
	for n := range l.exp.Models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := l.exp.Models[n]
		if m.Provider == "" {
			continue
		}
		p, ok := l.exp.Providers[m.Provider]
		if !ok {
			r := l.decls["model."+n].declRange
			l.errorf(&r, "Unknown provider", "model.%s uses provider %q, which is not declared. Add a provider %q block.", n, m.Provider, m.Provider)
			continue
		}
		m.Answerer = p.Answerer
	}
}
