package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// checkServiceOps refuses a service model whose provider's kind cannot
// serve the operation the instance will ask of it (stages.ServiceUser).
// Kinds the registry does not know are left to the provider block's own
// error.
func (g *Graph) checkServiceOps(inst *Instance) hcl.Diagnostics {
	su, ok := inst.cfg.Type.(stages.ServiceUser)
	if !ok {
		return nil
	}
	ops := su.ServiceOps(inst.Params)
	params := make([]string, 0, len(ops))
	for p := range ops {
		params = append(params, p)
	}
	sort.Strings(params)
	var diags hcl.Diagnostics
	for _, param := range params {
		m := inst.Params.Model(param)
		if m == nil {
			continue
		}
		pr := g.Exp.Providers[m.Provider]
		if pr == nil {
			continue
		}
		k, ok := llm.LookupKind(pr.Kind)
		if !ok {
			continue
		}
		for _, op := range ops[param] {
			if k.Serves(op) {
				continue
			}
			var servers []string
			for _, other := range llm.Kinds() {
				if other.Serves(op) {
					servers = append(servers, other.Name)
				}
			}
			d := errAt(inst.cfg, param, "%s is %s, on provider %q of kind %q, which does not serve %q, an operation this stage asks of it; kinds that serve it: %s. Give %s a model on a provider of one of those kinds.",
				param, m.Address, m.Provider, pr.Kind, op, strings.Join(servers, ", "), param)
			d[0].Summary = fmt.Sprintf("Cannot ask %s for %s", m.Address, op)
			diags = append(diags, d...)
		}
	}
	return diags
}
