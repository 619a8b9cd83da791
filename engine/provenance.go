package engine

import (
	"crypto/sha256"
	"sort"
	"strings"
	"sync"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Provenance: who answered the calls a node's output rests on, derived
// from the records the walk reads, never from the configuration.
//
//   - A call or service node's own answerer is its record's Answerer (or
//     its memo's, written from the record); its provenance is that
//     answerer and its inputs' provenance.
//   - A compute node's provenance is its inputs' provenance: a report
//     over a real judge's rankings of mock ideas rests on the mock.
//   - A dataset item rests on no call (nil).
//
// A compute node's key holds its inputs' provenance (keyInputs.provs), so
// an output that says what fed it (a report's SYNTHETIC marks) is never
// served once what fed it changed; a call's key holds its own answerer
// (its model's), and only that: the request is what is asked, and asking
// it again because an upstream record's label changed would pay for the
// same answer.

// provenance is an interned set of answerers: nodes with the same set share
// one value, so a walk of 200k nodes holds a handful.
type provenance struct {
	stages.Provenance
	digest [32]byte // of the canonical encoding; the zero digest is "no call"
}

// provTable interns provenances and answerers for one walk.
type provTable struct {
	mu        sync.Mutex
	byEnc     map[string]*provenance
	unions    map[[2]*provenance]*provenance
	answerers map[llm.Answerer]*llm.Answerer
	single    map[*llm.Answerer]*provenance // an interned answerer's own provenance
}

func newProvTable() *provTable {
	return &provTable{byEnc: map[string]*provenance{}, unions: map[[2]*provenance]*provenance{},
		answerers: map[llm.Answerer]*llm.Answerer{}, single: map[*llm.Answerer]*provenance{}}
}

// answerer interns a.
func (t *provTable) answerer(a llm.Answerer) *llm.Answerer {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.answerers[a]; ok {
		return p
	}
	p := &a
	t.answerers[a] = p
	return p
}

// of interns the provenance of as (sorted and deduplicated here); nil when
// as is empty.
func (t *provTable) of(as []llm.Answerer) *provenance {
	if len(as) == 0 {
		return nil
	}
	as = append([]llm.Answerer(nil), as...)
	sort.Slice(as, func(i, j int) bool { return answererLess(as[i], as[j]) })
	out := as[:1]
	for _, a := range as[1:] {
		if a != out[len(out)-1] {
			out = append(out, a)
		}
	}
	var b strings.Builder
	for _, a := range out {
		b.WriteString(a.Class)
		b.WriteByte(0)
		b.WriteString(a.Identity)
		b.WriteByte(0)
		if a.Synthetic {
			b.WriteByte('s')
		}
		b.WriteByte(1)
	}
	enc := b.String()
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.byEnc[enc]; ok {
		return p
	}
	p := &provenance{digest: sha256.Sum256([]byte("ideaflow-provenance-v1\x00" + enc))}
	p.Answerers = out
	for _, a := range out {
		p.Synthetic = p.Synthetic || a.Synthetic
	}
	t.byEnc[enc] = p
	return p
}

func answererLess(a, b llm.Answerer) bool {
	if a.Class != b.Class {
		return a.Class < b.Class
	}
	if a.Identity != b.Identity {
		return a.Identity < b.Identity
	}
	return !a.Synthetic && b.Synthetic
}

// union is the provenance of both a and b.
func (t *provTable) union(a, b *provenance) *provenance {
	switch {
	case a == nil:
		return b
	case b == nil || a == b:
		return a
	}
	if a.digest[0] > b.digest[0] || (a.digest[0] == b.digest[0] && string(a.digest[:]) > string(b.digest[:])) {
		a, b = b, a
	}
	k := [2]*provenance{a, b}
	t.mu.Lock()
	u, ok := t.unions[k]
	t.mu.Unlock()
	if ok {
		return u
	}
	u = t.of(append(append([]llm.Answerer(nil), a.Answerers...), b.Answerers...))
	t.mu.Lock()
	t.unions[k] = u
	t.mu.Unlock()
	return u
}

// with is p and the answerer a (interned by answerer: a warm walk asks
// this once per call node, so it costs two map look-ups).
func (t *provTable) with(p *provenance, a *llm.Answerer) *provenance {
	if a == nil {
		return p
	}
	t.mu.Lock()
	one, ok := t.single[a]
	t.mu.Unlock()
	if !ok {
		one = t.of([]llm.Answerer{*a})
		t.mu.Lock()
		t.single[a] = one
		t.mu.Unlock()
	}
	return t.union(p, one)
}

// unionAll is the provenance of every one of ps (typically a few distinct
// values among many inputs).
func (t *provTable) unionAll(ps []*provenance) *provenance {
	var out *provenance
	for _, p := range ps {
		if p != out {
			out = t.union(out, p)
		}
	}
	return out
}

// digestOf is p's digest; the zero digest for no call.
func (p *provenance) digestOf() [32]byte {
	if p == nil {
		return [32]byte{}
	}
	return p.digest
}

// view is what a stage sees of p (In.Provenance).
func (p *provenance) view() *stages.Provenance {
	if p == nil {
		return nil
	}
	return &p.Provenance
}

// answersOf is p's answerers (nil for no call).
func (p *provenance) answerersOf() []llm.Answerer {
	if p == nil {
		return nil
	}
	return p.Answerers
}

// synthetic reports whether p rests on a made-up answer.
func (p *provenance) synthetic() bool { return p != nil && p.Synthetic }

// String names p's answerers, for a key part's display: "mock seed 7",
// "endpoint http://a/v1; mock seed 7", "no call".
func (p *provenance) String() string {
	if p == nil {
		return "no call"
	}
	names := make([]string, len(p.Answerers))
	for i, a := range p.Answerers {
		names[i] = a.String()
	}
	return strings.Join(names, "; ")
}

// cacheAnswerer and llmAnswerer convert between the record's and the
// registry's spelling of an answerer (the cache package knows no stages).
func cacheAnswerer(a llm.Answerer) *cache.Answerer {
	return &cache.Answerer{Class: a.Class, Identity: a.Identity, Synthetic: a.Synthetic}
}

func llmAnswerer(a cache.Answerer) llm.Answerer {
	return llm.Answerer{Class: a.Class, Identity: a.Identity, Synthetic: a.Synthetic}
}

func cacheAnswerers(as []llm.Answerer) []cache.Answerer {
	if len(as) == 0 {
		return nil
	}
	out := make([]cache.Answerer, len(as))
	for i, a := range as {
		out[i] = *cacheAnswerer(a)
	}
	return out
}

// workModel is the model a call or service node asks, nil for compute.
func workModel(w *stages.Work) *stages.Model {
	switch {
	case w.Call != nil:
		return w.Call.Model
	case w.Service != nil:
		return w.Service.Model
	}
	return nil
}

// unknownAnswerer stands for a call record that does not say who answered
// it (written by a build that did not record it, and copied in by hand):
// its synthetic flag is the record's, its answerer is not claimed.
func unknownAnswerer(synthetic bool) llm.Answerer {
	return llm.Answerer{Class: "unknown", Synthetic: synthetic}
}

// recordAnswerer is who answered rec, a call or service record.
func recordAnswerer(rec *cache.Record) llm.Answerer {
	if rec.Answerer == nil {
		return unknownAnswerer(rec.Synthetic)
	}
	return llmAnswerer(*rec.Answerer)
}
