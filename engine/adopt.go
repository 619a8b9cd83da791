package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
)

// Adoption: keeping answers cached before key scheme v2, on the user's word.
//
// Key scheme v1 did not key an answer by who gave it, so a v1 record may be
// any provider's answer to its request: the mock's, one gateway's or
// another's. v2 keys are never v1 keys (keyFormat), so after an upgrade
// every model and service node misses. A user who knows who answered (the
// experiment only ever ran against one endpoint) adopts those records for
// a provider: for each of the provider's nodes whose v2 key misses, the
// record under its v1 key (the same parts without the answerer, under
// keyFormatV1) is stored under its v2 key, marked adopted (AdoptedFrom)
// and with the provider's answerer. Adoption refuses what the record
// itself contradicts: a record marked synthetic (the mock's) is never
// adopted for a provider whose answers are real, nor a real one for the
// mock. Compute nodes are not adopted: they are recomputed, for free, from
// the adopted answers.

// AdoptReport is what Adopt did, or with dry run would do.
type AdoptReport struct {
	Provider string         `json:"provider"`
	Answerer cache.Answerer `json:"answerer"`
	// Adopted counts the records stored under new keys (one per distinct
	// key), Answers the stored answers adopted with them (nodes whose
	// output settings are keyed apart from their request).
	Adopted int `json:"adopted"`
	Answers int `json:"answers"`
	// Cached counts nodes already cached under the new scheme.
	Cached int `json:"cached"`
	// RefusedSynthetic counts old records marked synthetic that were not
	// adopted for a provider whose answers are real; RefusedReal old
	// records not marked synthetic that were not adopted for the mock.
	RefusedSynthetic int `json:"refused_synthetic"`
	RefusedReal      int `json:"refused_real"`
	// Missing counts nodes with a record under neither scheme.
	Missing int `json:"missing"`
	// Unreached counts nodes whose request could not be rendered, because
	// an input of theirs is neither cached nor adopted.
	Unreached int  `json:"unreached"`
	DryRun    bool `json:"dry_run,omitempty"`
}

// adoption is an adopting walk's state.
type adoption struct {
	provider string
	dryRun   bool
	mu       sync.Mutex
	report   AdoptReport
	done     map[string]*cache.Record // new key -> the record adopted for it
}

// ErrNoSuchProvider is returned by Adopt for a provider the experiment
// does not declare.
var ErrNoSuchProvider = errors.New("no such provider")

// Adopt stores, for provider's model and service nodes in g whose key
// misses, the record cached under the previous key scheme, marked adopted
// and answered by provider's answerer (see above). With dryRun it writes
// nothing and reports what it would do. The walk adopts as it goes, so
// nodes whose requests are built from adopted answers (a ranking of
// adopted ideas) are adopted too.
func (e *Engine) Adopt(g *Graph, provider string, dryRun bool) (*AdoptReport, error) {
	p := g.Exp.Providers[provider]
	if p == nil {
		return nil, fmt.Errorf("%w %q in %s", ErrNoSuchProvider, provider, g.Exp.Name)
	}
	w := e.newWalker(g, true)
	w.log = e.Log
	w.adopt = &adoption{provider: provider, dryRun: dryRun, done: map[string]*cache.Record{}}
	w.adopt.report = AdoptReport{Provider: provider, Answerer: *cacheAnswerer(p.Answerer), DryRun: dryRun}
	w.walk(e.Resolvers)
	if err := w.storeError(); err != nil {
		return &w.adopt.report, fmt.Errorf("write the cache: %w", err)
	}
	r := &w.adopt.report
	for i, n := range g.Nodes {
		st := &w.states[i]
		if n.Inst.source || !n.Inst.usesProvider(provider) {
			continue
		}
		switch {
		case st.status == StatusToRun && st.why.kind == planUpstreamRuns && (n.Inst.calls || n.Inst.services):
			r.Unreached++ // an input must run first: its request is not known
		case st.status == StatusCached && (st.isCall || st.isService) && st.answerer != nil &&
			st.answerer.Class == p.Answerer.Class && st.answerer.Identity == p.Answerer.Identity && w.adopt.done[st.key] == nil:
			r.Cached++
		}
	}
	return r, nil
}

// usesProvider reports whether one of inst's model params names provider.
func (inst *Instance) usesProvider(provider string) bool {
	for _, v := range inst.Params {
		switch m := v.(type) {
		case *stages.Model:
			if m.Provider == provider {
				return true
			}
		case []*stages.Model:
			for _, mm := range m {
				if mm.Provider == provider {
					return true
				}
			}
		}
	}
	return false
}

// v1Parts are a call's key parts as key scheme v1 made them: the v2 parts
// without the answerer's (key_test.go pins that their v1 key is the one v1
// computed).
func v1Parts(parts []namedPart) []namedPart {
	out := make([]namedPart, 0, len(parts))
	for _, p := range parts {
		if !isAnswererPart(p.name) {
			out = append(out, p)
		}
	}
	return out
}

// adoptLookup is the adopting walk's lookup of a missed model or service
// node of the provider: it adopts the node's v1 record when it may, settles
// the node as cached and returns true; false leaves the node to planMiss.
func (w *walker) adoptLookup(i int32, work *stages.Work, key string, parts []namedPart, in keyInputs) bool {
	a := w.adopt
	m := workModel(work)
	if a == nil || m == nil || m.Provider != a.provider {
		return false
	}
	n := w.g.Nodes[i]
	a.mu.Lock()
	prev := a.done[key]
	a.mu.Unlock()
	if prev != nil {
		w.settleAdopted(i, prev) // another node with this key adopted it
		return true
	}
	oldKey := keyOfFormat(keyFormatV1, v1Parts(parts))
	rec, err := w.store.Get(oldKey)
	switch {
	case errors.Is(err, cache.ErrNotFound):
		a.count(func(r *AdoptReport) { r.Missing++ })
		return false
	case err != nil:
		w.log.Warn().Str("node", n.Address).Err(err).Msg("cannot read the previous-scheme record; not adopted")
		a.count(func(r *AdoptReport) { r.Missing++ })
		return false
	}
	declared := m.Answerer
	switch {
	case rec.Synthetic && !declared.Synthetic:
		a.count(func(r *AdoptReport) { r.RefusedSynthetic++ })
		return false
	case !rec.Synthetic && declared.Synthetic:
		a.count(func(r *AdoptReport) { r.RefusedReal++ })
		return false
	}
	adopted := *rec
	adopted.Key, adopted.Stage, adopted.Address = key, n.Inst.Address, n.Address
	adopted.Answerer = cacheAnswerer(declared)
	adopted.AdoptedFrom = oldKey
	adopted.Parts = cacheParts(append(parts[:len(parts):len(parts)], n.Inst.about...))
	answers := 0
	var answer *cache.Record
	if ak := answerKeyOf(n, work, in); ak != "" {
		oldAnswer := keyOfFormat(keyFormatV1, v1Parts(answerParts(n, work, in)))
		if old, err := w.store.Get(oldAnswer); err == nil && old.Synthetic == declared.Synthetic {
			if has, _ := w.store.Has(ak); !has {
				cp := *old
				cp.Key, cp.Answerer, cp.AdoptedFrom = ak, cacheAnswerer(declared), oldAnswer
				answer, answers = &cp, 1
			}
		}
		if adopted.AnswerKey != "" {
			adopted.AnswerKey = ak
		}
	}
	a.mu.Lock()
	if prev := a.done[key]; prev != nil {
		a.mu.Unlock()
		w.settleAdopted(i, prev)
		return true
	}
	a.done[key] = &adopted
	a.report.Adopted++
	a.report.Answers += answers
	a.mu.Unlock()
	if !a.dryRun {
		if answer != nil {
			if err := w.store.Put(answer); err != nil {
				w.setStoreErr(err)
			}
		}
		if err := w.store.Put(&adopted); err != nil {
			w.setStoreErr(err)
		} else if err := w.store.SetLatest(w.expKey+n.Address, key); err != nil {
			w.setStoreErr(err)
		}
	}
	w.settleAdopted(i, &adopted)
	return true
}

func (a *adoption) count(f func(r *AdoptReport)) {
	a.mu.Lock()
	f(&a.report)
	a.mu.Unlock()
}

// settleAdopted settles node i from an adopted record, as a cache hit does.
func (w *walker) settleAdopted(i int32, rec *cache.Record) {
	st := &w.states[i]
	st.status, st.known, st.output = StatusCached, true, rec.Output
	if d, err := hex.DecodeString(rec.OutputDigest); err == nil && len(d) == 32 {
		copy(st.digest[:], d)
	} else {
		st.digest = sha256.Sum256(rec.Output)
	}
	st.answerer = w.provs.answerer(recordAnswerer(rec))
	st.prov = w.provs.with(st.prov, st.answerer)
	st.servedModel, st.fingerprint = rec.ServedModel, rec.Fingerprint
	noteDrop(st, rec.Output)
	w.finish(i)
}
