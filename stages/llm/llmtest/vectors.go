package llmtest

import (
	"encoding/json"
	"strings"
)

// VectorFault puts one bad vector in an embeddings reply (the last input's
// vector) or a TEI embed_all reply (the last input's last token vector),
// as a failing server, a model loaded wrong or a gateway mixing backends
// sends them. The zero VectorFault is a normal reply.
type VectorFault int

const (
	VectorsOK VectorFault = iota
	// ShortVector: one component fewer than the others.
	ShortVector
	// ZeroVector: every component 0.
	ZeroVector
	// EmptyVector: [].
	EmptyVector
	// NullVector: null in place of the vector.
	NullVector
	// NullComponent: null in place of the first component.
	NullComponent
	// NaNComponent: NaN in place of the first component, as Python's json
	// module writes a non-finite number.
	NaNComponent
	// InfComponent: Infinity in place of the first component.
	InfComponent
	// HugeComponent: 1e39 in place of the first component, beyond float32.
	HugeComponent
)

// VectorFaults lists every bad VectorFault, for table-driven tests.
var VectorFaults = []VectorFault{ShortVector, ZeroVector, EmptyVector, NullVector, NullComponent, NaNComponent, InfComponent, HugeComponent}

func (f VectorFault) String() string {
	return [...]string{"ok", "one component short", "all zeros", "empty", "null vector", "null component", "NaN component",
		"Infinity component", "component beyond float32"}[f]
}

// vectorMarker stands for the bad vector in an encoded reply until it is
// spliced in (an encoder cannot write NaN, and validates raw JSON).
const vectorMarker = `"@@VECTOR@@"`

// raw is the JSON of the bad vector in place of v.
func (f VectorFault) raw(v []float32) string {
	rest := func() string {
		b, _ := json.Marshal(v[1:])
		return strings.TrimPrefix(string(b), "[")
	}
	enc := func(v []float32) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch f {
	case ShortVector:
		return enc(v[:len(v)-1])
	case ZeroVector:
		return enc(make([]float32, len(v)))
	case EmptyVector:
		return "[]"
	case NullVector:
		return "null"
	case NullComponent:
		return "[null," + rest()
	case NaNComponent:
		return "[NaN," + rest()
	case InfComponent:
		return "[Infinity," + rest()
	case HugeComponent:
		return "[1e39," + rest()
	}
	return enc(v)
}

// vectorsJSON encodes vectors, the last one (by its address in the list)
// replaced by f's marker; splice puts f's raw vector in its place.
func vectorsJSON(vs [][]float32, f VectorFault) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		b, _ := json.Marshal(v)
		out[i] = b
	}
	if f != VectorsOK && len(vs) > 0 {
		out[len(vs)-1] = json.RawMessage(vectorMarker)
	}
	return out
}

func spliceVector(body []byte, v []float32, f VectorFault) []byte {
	if f == VectorsOK {
		return body
	}
	return []byte(strings.Replace(string(body), vectorMarker, f.raw(v), 1))
}
