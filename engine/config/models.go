package config

// model blocks.

import (
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages"
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
	if f, ok := l.float(a, "temperature", nil); ok {
		m.Temperature = &f
	}
	if f, ok := l.float(a, "top_p", nil); ok {
		m.TopP = &f
	}
	m.MaxTokens, _ = l.int(a, "max_tokens", nil)
	if s, ok := l.int(a, "seed", nil); ok {
		m.Seed = &s
	}
	m.Stop, _ = l.strings(a, "stop", nil)
	m.JSONMode, _ = l.boolean(a, "json_mode", nil)
	for _, pb := range d.content.Blocks {
		pc, _ := pb.Body.Content(priceSchema)
		if pc != nil {
			m.Price.InputPerMTok, _ = l.float(pc.Attributes, "input_per_mtok", nil)
			m.Price.OutputPerMTok, _ = l.float(pc.Attributes, "output_per_mtok", nil)
		}
	}
	l.exp.Models[d.name] = m
	optNum := func(p *float64) cty.Value {
		if p == nil {
			return cty.NullVal(cty.Number)
		}
		return cty.NumberFloatVal(*p)
	}
	l.values.ns["model"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr:       cty.StringVal(d.addr),
		"name":        cty.StringVal(m.Name),
		"family":      cty.StringVal(m.Family),
		"provider":    cty.StringVal(m.Provider),
		"temperature": optNum(m.Temperature),
		"max_tokens":  cty.NumberIntVal(int64(m.MaxTokens)),
	})
}

// checkProviderUse reports models whose provider does not exist in this experiment.
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
		if _, ok := l.exp.Providers[m.Provider]; !ok {
			r := l.decls["model."+n].declRange
			l.errorf(&r, "Unknown provider", "model.%s uses provider %q, which is not declared. Add a provider %q block.", n, m.Provider, m.Provider)
		}
	}
}
