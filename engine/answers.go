package engine

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// Answers and outputs: a call node whose Output reads params of its stage
// (Call.KeyParams, e.g. LiveIdeaBench's max_words) is keyed on them, so its
// output under one setting is never served for another. Its answer is not
// about them: the engine also stores the parsed answer under the node's
// answer key (answerKeyOf, the key without those params), and a node whose
// own key misses but whose answer key hits derives its output from the
// stored answer with no call. The two keys play the parts of cmd/go's
// action and output IDs: what was asked, and what was made of it.
//
// Safety envelope: the answer record holds what the executor returned for
// the exact request (the same parts as the node's key but the output
// params), so re-deriving is what a fresh call answered the same way would
// give. Within one run, nodes that share an answer key but not a key send
// the request once: the first is the answer's sender, the others wait on
// its answer flight and are resolved again when it lands, deriving their
// outputs from it (or, if it failed, one of them sends it).

// answerRecord is the Output of an answer record: the parsed answer.
type answerRecord struct {
	Answer *format.Answer `json:"answer"`
}

// putAnswer stores the answer of task t's call under the node's answer key,
// durably, before the node's own record: a crash between the two leaves an
// answer to derive from, never a node record without one.
func (w *walker) putAnswer(t task, res *Result) error {
	st := &w.states[t.idx]
	if st.answerKey == "" || res.Answer == nil {
		return nil
	}
	out, err := json.Marshal(answerRecord{Answer: res.Answer})
	if err != nil {
		return fmt.Errorf("encode the answer of %s: %w", w.g.Nodes[t.idx].Address, err)
	}
	who := answeredBy(t.work, res)
	rec := &cache.Record{Key: st.answerKey, Stage: w.g.Nodes[t.idx].Inst.Address, Address: w.g.Nodes[t.idx].Address + "#answer",
		Output: out, Usage: usageOf(res.Usage), ServedModel: res.ServedModel, Fingerprint: res.Fingerprint, Raw: res.Raw,
		Reasoning: res.Reasoning, Attempts: attemptsOf(res.Attempts), Synthetic: who.Synthetic, Answerer: who,
		CreatedAt: time.Now().UTC()}
	if tk := t.work.Call; tk != nil {
		rec.Model = tk.Request.Model
	}
	if err := w.store.Put(rec); err != nil {
		return err
	}
	w.flights.markRan(answerFlight(st.answerKey))
	w.landAnswer(t.idx)
	return nil
}

// answerFlight is the flights key of an answer key: apart from node keys.
func answerFlight(answerKey string) string { return "answer\x00" + answerKey }

// joinAnswer makes node i the sender of its answer key's call, or a waiter
// for it: false means it waits, and is resolved again when the answer lands
// (or its sender fails). Call it after runReuse found no stored answer.
func (w *walker) joinAnswer(i int32, work *stages.Work, key string, parts []namedPart, inKey [32]byte) (send bool) {
	st := &w.states[i]
	if st.answerKey == "" {
		return true
	}
	wt := waiter{idx: i, inKey: inKey}
	switch w.flights.join(answerFlight(st.answerKey), wt, false) {
	case waitInFlight:
		return false
	case landedHere:
		// Stored since runReuse looked: derive from it after all.
		if w.runReuse(i, work, key, parts, inKey) {
			return false
		}
		if w.flights.join(answerFlight(st.answerKey), wt, true) == waitInFlight {
			return false
		}
	}
	st.answerSender = true
	return true
}

// landAnswer ends node i's answer flight, if it is the sender, and resolves
// its waiters again: they find the stored answer, or one of them sends.
func (w *walker) landAnswer(i int32) {
	st := &w.states[i]
	if !st.answerSender {
		return
	}
	st.answerSender = false
	for _, wt := range w.flights.land(answerFlight(st.answerKey)) {
		w.enqueue(wt.idx)
	}
}

// storedAnswer reads the answer record under key; ok is false when there is
// none (or it cannot be read: the node then asks the model, as without one).
func (w *walker) storedAnswer(key string) (*cache.Record, *format.Answer, bool) {
	if key == "" || w.distrusted(key) {
		return nil, nil, false
	}
	rec, err := w.store.Get(key)
	if err != nil {
		if !errors.Is(err, cache.ErrNotFound) {
			w.log.Warn().Str("answer", key).Err(err).Msg("cannot read a stored answer; asking again")
		}
		return nil, nil, false
	}
	var a answerRecord
	if err := json.Unmarshal(rec.Output, &a); err != nil || a.Answer == nil {
		w.log.Warn().Str("answer", key).Msg("a stored answer does not decode; asking again")
		return nil, nil, false
	}
	return rec, a.Answer, true
}

// planReuse settles, in a plan, a call node whose answer is stored and
// accepted by its Output under the node's params: its output is derived now
// (as a plan evaluates a compute node), and it is counted to run with no
// call.
func (w *walker) planReuse(i int32, work *stages.Work) bool {
	st := &w.states[i]
	if work.Call.Output == nil {
		return false
	}
	rec, a, ok := w.storedAnswer(st.answerKey)
	if !ok {
		return false
	}
	if a.Raw == "" { // answers stored before Answer kept its text
		a.Raw = rec.Raw
	}
	out, err := work.Call.Output(a)
	if err != nil {
		return false // refused under these params: the run asks again
	}
	st.reused = true
	st.known, st.output, st.digest = true, out, sha256.Sum256(out)
	noteDrop(st, out)
	return true
}

// runReuse completes, in a run, a call node whose answer is stored: the
// stage's Output applied to it, a record of its own, and no call. An answer
// the Output refuses under the node's params is not the node's failure: the
// model is asked again, as a failed node is on its next run, and its new
// answer replaces the stored one.
func (w *walker) runReuse(i int32, work *stages.Work, key string, parts []namedPart, inKey [32]byte) bool {
	st := &w.states[i]
	if work.Call == nil || work.Call.Output == nil {
		return false
	}
	ans, a, ok := w.storedAnswer(st.answerKey)
	if !ok {
		return false
	}
	if a.Raw == "" { // answers stored before Answer kept its text
		a.Raw = ans.Raw
	}
	out, err := work.Call.Output(a)
	if err != nil {
		return false
	}
	st.reused = true
	w.complete(i, inKey, key, parts, &cache.Record{Output: out, Model: ans.Model, ServedModel: ans.ServedModel,
		Fingerprint: ans.Fingerprint, Raw: ans.Raw, Reasoning: ans.Reasoning, Synthetic: ans.Synthetic, AnswerKey: st.answerKey,
		Answerer: cacheAnswerer(recordAnswerer(ans)), AdoptedFrom: ans.AdoptedFrom})
	return true
}
