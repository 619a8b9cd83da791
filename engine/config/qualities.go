package config

// quality blocks.

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages"
)

// evalQuality decodes a quality indicator. definition is optional: a bare
// name (quality "feasibility" {}) is how the IdeaBench paper's default
// prompt asks, and the prompt then names the quality without defining it.
// Either way the rendered prompt, and so the key, holds what was given.
func (l *loader) evalQuality(d *decl) {
	a := d.content.Attributes
	q := &stages.Quality{Address: d.addr, Name: d.name}
	if n, ok := l.str(a, "name", nil); ok {
		q.Name = n
	}
	q.Definition, _ = l.str(a, "definition", nil)
	if strings.TrimSpace(q.Definition) == "" && a["definition"] != nil {
		l.errorf(a["definition"].Expr.Range().Ptr(), "Empty quality definition",
			"An empty definition says nothing to the judge: give one, e.g. definition = \"developing new methodologies ...\", or leave the attribute out to name the quality alone.")
	}
	l.exp.Qualities[d.name] = q
	l.values.ns["quality"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(q.Name), "definition": cty.StringVal(q.Definition),
	})
}
