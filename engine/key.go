package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// namedPart is one named piece of a key's material. The key is the SHA-256
// over the parts' names and digests in a fixed order, so it is stable across
// machines, folders and runs, and each part can be compared on its own to
// explain a miss.
type namedPart struct {
	name    string
	digest  [32]byte
	display string
}

// keyFormat names the key scheme; it is hashed into every key. v2 added who
// answers (answerer parts of model and service nodes, inputs.provenance of
// compute nodes): a v1 key means something else (a mock's answer under it
// served a real endpoint's node), so no v1 key is ever looked up as a v2
// one. `ideaflow cache adopt` reads v1 records on purpose (keyOfFormat).
const (
	keyFormat   = "ideaflow-key-v2"
	keyFormatV1 = "ideaflow-key-v1"
)

func partOf(name string, b []byte, display string) namedPart {
	return namedPart{name: name, digest: sha256.Sum256(b), display: display}
}

func floatDisplay(p *float64) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// keyInputs is what a node's key reads of its inputs, in Node.Deps order:
// their output digests, and who answered the calls each rests on
// (compute nodes only; nil entries rest on no call).
type keyInputs struct {
	digests [][32]byte
	provs   []*provenance
	union   *provenance // of provs
}

// Names of the key parts that say who answers a call (answererParts) and
// who answered what a compute node reads (keyParts).
const (
	partAnswererClass    = "answerer.class"
	partAnswererIdentity = "answerer.identity"
	partInputsProvenance = "inputs.provenance"
)

// keyParts lists a node's key material. What is never here: API keys and
// other credentials, provider block names, concurrency, rate limits,
// timeouts, retry settings, prices, log settings and experiment paths —
// none of them changes an answer. Who answers does, so it is here.
//
// Model nodes are keyed on the exact request (messages, model, sampling
// parameters, seed, sample index, expected format), the params their
// Output reads (Call.KeyParams), their answerer (the model's provider's
// class and identity: a mock's answer never serves an endpoint's node, nor
// one endpoint's another's) and their inputs' output digests. Service nodes
// are keyed on the operation, the service's model, the request body and
// their answerer. Compute nodes are keyed on their instance's params, their
// identity, their inputs' output digests and who answered the calls each
// input rests on (so an output that labels its inputs as synthetic is never
// served for inputs that are not). Keying on upstream outputs, not upstream
// keys, gives early cutoff: a changed filter that yields the same
// references re-runs nothing downstream.
func keyParts(n *Node, w *stages.Work, in keyInputs) []namedPart {
	parts := make([]namedPart, 0, 16)
	parts = append(parts, partOf("stage", []byte(n.Inst.Type+"@"+n.Inst.Version), n.Inst.Type+"@"+n.Inst.Version))
	if c := w.Call; c != nil {
		r := c.Request
		format, _ := json.Marshal(r.Format)
		parts = append(parts,
			partOf("model", []byte(r.Model), r.Model),
			namedPart{name: "prompt", digest: messagesDigest(r.Messages)},
			partOf("model.temperature", []byte(floatDisplay(r.Temperature)), floatDisplay(r.Temperature)),
			partOf("model.top_p", []byte(floatDisplay(r.TopP)), floatDisplay(r.TopP)),
			partOf("model.max_tokens", []byte(strconv.Itoa(r.MaxTokens)), strconv.Itoa(r.MaxTokens)),
			partOf("model.seed", []byte(intDisplay(r.Seed)), intDisplay(r.Seed)),
			partOf("model.stop", mustJSON(r.Stop), string(mustJSON(r.Stop))),
			partOf("model.json_mode", []byte(strconv.FormatBool(r.JSONMode)), strconv.FormatBool(r.JSONMode)),
			partOf("json_schema", r.JSONSchema, ""),
			partOf("sample", []byte(strconv.Itoa(r.Sample)), strconv.Itoa(r.Sample)),
			partOf("format", format, string(r.Format.Kind)),
		)
		parts = append(parts, answererParts(c.Model.Answerer)...)
		parts = appendParams(parts, n, c.KeyParams)
	} else if sv := w.Service; sv != nil {
		r := sv.Request
		parts = append(parts,
			partOf("service.op", []byte(r.Op), r.Op),
			partOf("model", []byte(r.Model), r.Model),
			partOf("service.request", r.Body, shorten(string(r.Body), 60)),
		)
		parts = append(parts, answererParts(sv.Model.Answerer)...)
	} else {
		if w.KeyParams == nil {
			parts = append(parts, n.Inst.paramParts...)
		} else {
			parts = appendParams(parts, n, w.KeyParams)
		}
		parts = append(parts, partOf("node", nodeIdentity(n), ""))
		h := sha256.New()
		for k := range in.digests {
			var d [32]byte
			if k < len(in.provs) {
				d = in.provs[k].digestOf()
			}
			h.Write(d[:])
		}
		var pd [32]byte
		h.Sum(pd[:0])
		parts = append(parts, namedPart{name: partInputsProvenance, digest: pd, display: in.union.String()})
	}
	h := sha256.New()
	for _, d := range in.digests {
		h.Write(d[:])
	}
	var inputs [32]byte
	h.Sum(inputs[:0])
	parts = append(parts, namedPart{name: "inputs", digest: inputs, display: strconv.Itoa(len(in.digests)) + " upstream outputs"})
	return parts
}

// answererParts are the key parts naming who answers a call: the class
// (mock, baseline, corpus, endpoint) and the identity within it.
func answererParts(a llm.Answerer) []namedPart {
	return []namedPart{
		partOf(partAnswererClass, []byte(a.Class), a.Class),
		partOf(partAnswererIdentity, []byte(a.Identity), a.Identity),
	}
}

// isAnswererPart reports whether a key part names who answers.
func isAnswererPart(name string) bool {
	return name == partAnswererClass || name == partAnswererIdentity
}

// answerKeyOf is a call node's answer key when its Output reads params
// (Call.KeyParams): the node's key parts without those params, and a part
// naming the record kind. The answer record under it holds the parsed
// answer (see putAnswer), so changing such a param (LiveIdeaBench's
// max_words) re-derives the node's output from it instead of asking the
// model again. It is "" for every other node, whose key is its answer's.
func answerKeyOf(n *Node, w *stages.Work, in keyInputs) string {
	if w.Call == nil || len(w.Call.KeyParams) == 0 {
		return ""
	}
	return keyOf(answerParts(n, w, in))
}

// answerParts are the parts of a call's answer key.
func answerParts(n *Node, w *stages.Work, in keyInputs) []namedPart {
	c := *w.Call
	c.KeyParams = nil
	parts := keyParts(n, &stages.Work{Call: &c}, in)
	return append(parts, partOf("record", []byte("answer"), "answer"))
}

// appendParams appends the key parts of the instance params named.
func appendParams(parts []namedPart, n *Node, names []string) []namedPart {
	for _, p := range n.Inst.paramParts {
		for _, name := range names {
			if p.name == "param."+name {
				parts = append(parts, p)
			}
		}
	}
	return parts
}

// nodeIdentity is what tells a compute node from its instance's others: its
// item and slot, or for an expanded node its item and label, which names
// what the node stands for, so reordered children keep their keys.
func nodeIdentity(n *Node) []byte {
	if n.expanded {
		return []byte(n.Spec.Item + "\x00label\x00" + n.Spec.Label)
	}
	return []byte(n.Spec.Item + "\x00" + strconv.Itoa(n.Spec.Slot))
}

// messagesDigest hashes the messages with length prefixes, so no two
// different conversations share an encoding.
func messagesDigest(msgs []llm.Message) [32]byte {
	h := sha256.New()
	var buf [8]byte
	for _, m := range msgs {
		for _, s := range [2]string{m.Role, m.Content} {
			binary.LittleEndian.PutUint64(buf[:], uint64(len(s)))
			h.Write(buf[:])
			h.Write([]byte(s))
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func intDisplay(p *int) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(*p)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode key part: %v", err))
	}
	return b
}

// keyOf digests the parts into the node's key.
func keyOf(parts []namedPart) string { return keyOfFormat(keyFormat, parts) }

// keyOfFormat digests parts under a key scheme: keyFormat for every key
// the engine looks up, keyFormatV1 only to find the records adoption may
// copy (see adopt.go).
func keyOfFormat(format string, parts []namedPart) string {
	h := sha256.New()
	h.Write([]byte(format))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p.name))
		h.Write([]byte{0})
		h.Write(p.digest[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// missingDigest stands for a failed or skipped input of an aggregate that tolerates it.
var missingDigest = sha256.Sum256([]byte("ideaflow:missing-input"))

func cacheParts(parts []namedPart) []cache.Part {
	out := make([]cache.Part, len(parts))
	for i, p := range parts {
		d := hex.EncodeToString(p.digest[:])
		if strings.HasPrefix(p.name, aboutPrefix) {
			// About parts only explain a miss: 64 bits tell two values apart
			// well enough and keep the parts small.
			d = d[:aboutDigestLen]
		}
		out[i] = cache.Part{Name: p.name, Digest: d, Display: p.display}
	}
	return out
}

// explain compares a node's new key parts (and about parts) with those of
// the key last computed at the same address and says, in words, why the
// node must run. When the instance's params explain the change (a reworded
// quality definition, another judge), it names them instead of their
// consequences (the prompt, the request's model). Who answers is always
// named when it changed: it decides whether a cached answer may serve.
func explain(old []cache.Part, parts, about []namedPart) string {
	if oldScheme(old) {
		return oldSchemeReason
	}
	prev := map[string]cache.Part{}
	prevDigest, prevDisplay := map[string]string{}, map[string]string{}
	for _, p := range old {
		prev[p.Name] = p
		prevDigest[p.Name], prevDisplay[p.Name] = p.Digest, p.Display
	}
	reasons := explainAbout(prevDigest, prevDisplay, about)
	explained := len(reasons) > 0
	answerer, sameAnswerers := false, false
	for _, p := range parts {
		o, ok := prev[p.name]
		if !ok {
			if !explained {
				reasons = append(reasons, p.name+" added")
			}
			continue
		}
		if o.Digest == hex.EncodeToString(p.digest[:]) {
			continue
		}
		switch {
		case p.name == "inputs":
			reasons = append(reasons, "upstream output changed")
		case p.name == "stage":
			reasons = append(reasons, "stage implementation changed ("+o.Display+" -> "+p.display+")")
		case isAnswererPart(p.name):
			if !answerer {
				answerer = true
				reasons = append(reasons, "answerer changed ("+answererOfParts(old)+" -> "+answererOfNamed(parts)+")")
			}
		case p.name == partInputsProvenance && o.Display == p.display:
			// The same answerers over other inputs: "upstream output
			// changed" says it, unless nothing else does (below).
			sameAnswerers = true
		case p.name == partInputsProvenance:
			reasons = append(reasons, "who answered its inputs changed ("+o.Display+" -> "+p.display+")")
		case explained:
			// A consequence of the params named above.
		case p.name == "prompt":
			reasons = append(reasons, "prompt changed")
		case p.name == "format":
			reasons = append(reasons, "answer format changed")
		case o.Display != "" || p.display != "":
			reasons = append(reasons, fmt.Sprintf("%s changed (%s -> %s)", p.name, o.Display, p.display))
		default:
			reasons = append(reasons, p.name+" changed")
		}
	}
	if len(reasons) == 0 && sameAnswerers {
		return "who answered its inputs changed"
	}
	if len(reasons) == 0 {
		return "not in cache"
	}
	return strings.Join(reasons, ", ")
}

// oldSchemeReason explains a miss whose last key at the address was made by
// the key scheme before answers were keyed by who gave them.
const oldSchemeReason = "cached under the previous key scheme, which did not key answers by who gave them"

// oldScheme reports whether parts were stored by an ideaflow before key
// scheme v2: they have neither answerer parts (a call) nor inputs.provenance
// (a compute node).
func oldScheme(parts []cache.Part) bool {
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if p.Name == partAnswererClass || p.Name == partInputsProvenance {
			return false
		}
	}
	return true
}

// onlyAnswererDiffers reports whether the key parts of old and parts agree
// on everything but who answers, which does differ: the cached answer
// would serve the node, were it from the same answerer.
func onlyAnswererDiffers(old []cache.Part, parts []namedPart) bool {
	prev := map[string]string{}
	for _, p := range old {
		if !strings.HasPrefix(p.Name, aboutPrefix) {
			prev[p.Name] = p.Digest
		}
	}
	if len(prev) != len(parts) {
		return false
	}
	differs := false
	for _, p := range parts {
		d, ok := prev[p.name]
		if !ok {
			return false
		}
		if d == hex.EncodeToString(p.digest[:]) {
			continue
		}
		if !isAnswererPart(p.name) {
			return false
		}
		differs = true
	}
	return differs
}

// answererOfParts names the answerer stored parts say, as Answerer.String.
func answererOfParts(parts []cache.Part) string {
	var class, id string
	for _, p := range parts {
		switch p.Name {
		case partAnswererClass:
			class = p.Display
		case partAnswererIdentity:
			id = p.Display
		}
	}
	return llm.Answerer{Class: class, Identity: id}.String()
}

func answererOfNamed(parts []namedPart) string {
	var class, id string
	for _, p := range parts {
		switch p.name {
		case partAnswererClass:
			class = p.display
		case partAnswererIdentity:
			id = p.display
		}
	}
	return llm.Answerer{Class: class, Identity: id}.String()
}
