package engine

import (
	"errors"
	"fmt"

	"github.com/ideaflow/ideaflow/engine/executor"
)

// The offline mode (run --offline): a run whose plan needs a call not in
// the cache is refused before anything runs.

// checkCallable refuses, before any call, a run that cannot make the calls
// its plan needs: offline with calls not in the cache, or a provider in use
// whose key is missing (when keys are read in this process).
func (p *Plan) checkCallable(offline, keysHere bool) error {
	if !offline {
		if !keysHere {
			return nil // read where the calls run (executor.RemoteKeys)
		}
		if diags := p.g.Exp.MissingKeys(p.callProviders()); diags.HasErrors() {
			return &InputError{Diags: diags}
		}
		return nil
	}
	var first FailedNode
	models, services := 0, 0
	for i, n := range p.g.Nodes {
		st := &p.states[i]
		if n.Inst.source || st.status == StatusCached || !(st.isCall || st.isService) {
			continue
		}
		if models+services == 0 {
			first = FailedNode{Address: n.Address, Error: st.why.String()}
		}
		if st.isService {
			services++
		} else {
			models++
		}
	}
	if models+services == 0 {
		return nil
	}
	what := fmt.Sprintf("%d model node(s)", models)
	switch {
	case models == 0:
		what = fmt.Sprintf("%d service node(s)", services)
	case services > 0:
		what += fmt.Sprintf(" and %d service node(s)", services)
	}
	msg := fmt.Sprintf("%s are not in the cache, e.g. %s (%s); import a cache bundle that holds them or run without --offline",
		what, first.Address, first.Error)
	return &InputError{Err: fmt.Errorf("%w: %s", ErrOffline, msg)}
}

// ErrOffline is returned when an offline run would need a model call.
var ErrOffline = errors.New("offline run needs model calls")

// keysHere says whether ex reads its providers' keys in this process:
// every executor does but one that says otherwise (executor.RemoteKeys).
func keysHere(ex Executor) bool {
	rk, ok := ex.(executor.RemoteKeys)
	return !ok || !rk.KeysElsewhere()
}
