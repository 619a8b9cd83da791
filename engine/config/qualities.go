package config

// quality blocks.

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages"
)

func (l *loader) evalQuality(d *decl) {
	a := d.content.Attributes
	q := &stages.Quality{Address: d.addr, Name: d.name}
	if n, ok := l.str(a, "name", nil); ok {
		q.Name = n
	}
	q.Definition, _ = l.str(a, "definition", nil)
	if strings.TrimSpace(q.Definition) == "" && a["definition"] != nil {
		l.errorf(a["definition"].Expr.Range().Ptr(), "Empty quality definition",
			"A quality indicator needs a definition the judge can apply, e.g. definition = \"developing new methodologies ...\".")
	}
	l.exp.Qualities[d.name] = q
	l.values.ns["quality"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(q.Name), "definition": cty.StringVal(q.Definition),
	})
}
