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

const keyFormat = "ideaflow-key-v1"

func partOf(name string, b []byte, display string) namedPart {
	return namedPart{name: name, digest: sha256.Sum256(b), display: display}
}

func floatDisplay(p *float64) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// keyParts lists a node's key material. What is never here: API keys, base
// URLs, provider names, concurrency, rate limits, timeouts, log settings and
// experiment paths — none of them changes an answer.
//
// Service nodes are keyed on the operation, the service's model and the
// request body. Model nodes are keyed on the exact request (messages, model, sampling
// parameters, seed, sample index, expected format), the params their
// Output reads (Call.KeyParams) and their inputs' output digests; compute nodes on their instance's params plus their inputs'
// output digests. Keying on upstream outputs, not upstream keys, gives early
// cutoff: a changed filter that yields the same references re-runs nothing
// downstream.
func keyParts(n *Node, w *stages.Work, inputs [][32]byte) []namedPart {
	parts := make([]namedPart, 0, 14)
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
		parts = appendParams(parts, n, c.KeyParams)
	} else if sv := w.Service; sv != nil {
		r := sv.Request
		parts = append(parts,
			partOf("service.op", []byte(r.Op), r.Op),
			partOf("model", []byte(r.Model), r.Model),
			partOf("service.request", r.Body, shorten(string(r.Body), 60)),
		)
	} else {
		if w.KeyParams == nil {
			parts = append(parts, n.Inst.paramParts...)
		} else {
			parts = appendParams(parts, n, w.KeyParams)
		}
		parts = append(parts, partOf("node", nodeIdentity(n), ""))
	}
	h := sha256.New()
	for _, d := range inputs {
		h.Write(d[:])
	}
	var in [32]byte
	h.Sum(in[:0])
	parts = append(parts, namedPart{name: "inputs", digest: in, display: strconv.Itoa(len(inputs)) + " upstream outputs"})
	return parts
}

// answerKeyOf is a call node's answer key when its Output reads params
// (Call.KeyParams): the node's key parts without those params, and a part
// naming the record kind. The answer record under it holds the parsed
// answer (see putAnswer), so changing such a param (LiveIdeaBench's
// max_words) re-derives the node's output from it instead of asking the
// model again. It is "" for every other node, whose key is its answer's.
func answerKeyOf(n *Node, w *stages.Work, inputs [][32]byte) string {
	if w.Call == nil || len(w.Call.KeyParams) == 0 {
		return ""
	}
	c := *w.Call
	c.KeyParams = nil
	parts := keyParts(n, &stages.Work{Call: &c}, inputs)
	return keyOf(append(parts, partOf("record", []byte("answer"), "answer")))
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
func keyOf(parts []namedPart) string {
	h := sha256.New()
	h.Write([]byte(keyFormat))
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
// consequences (the prompt, the request's model).
func explain(old []cache.Part, parts, about []namedPart) string {
	prev := map[string]cache.Part{}
	prevDigest, prevDisplay := map[string]string{}, map[string]string{}
	for _, p := range old {
		prev[p.Name] = p
		prevDigest[p.Name], prevDisplay[p.Name] = p.Digest, p.Display
	}
	reasons := explainAbout(prevDigest, prevDisplay, about)
	explained := len(reasons) > 0
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
	if len(reasons) == 0 {
		return "not in cache"
	}
	return strings.Join(reasons, ", ")
}
