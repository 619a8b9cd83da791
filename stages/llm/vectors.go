package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
)

// errBadVectors: a reply whose vectors cannot be compared: empty, null,
// of another length than the others, with a component that is not a finite
// number, or all zeros. Such a reply is refused on arrival and retried,
// like a reply with missing vectors: a similarity computed from it would be
// a number with no sign of being wrong (vectors of mixed lengths compared
// over the shorter one, zero vectors scoring 0), and a server that answers
// so is failing (a model loaded wrong, a gateway mixing backends), which a
// second ask may not meet.
var errBadVectors = errors.New("unusable vectors")

// vectorShape checks the vectors of one call as they arrive. Every vector
// must have the length of the first (or of the model's earlier replies,
// when dims knew them), finite components, and a norm above zero.
type vectorShape struct {
	dim   int  // the length every vector must have; 0 until the first
	known bool // dim is the model's, from earlier replies
}

// check checks one vector; at names it for the error ("input 2, token 5").
func (s *vectorShape) check(v []float32, at string) error {
	if len(v) == 0 {
		return fmt.Errorf("%w: %s is empty", errBadVectors, at)
	}
	switch {
	case s.dim == 0:
		s.dim = len(v)
	case len(v) != s.dim && s.known:
		return fmt.Errorf("%w: %s has %d dimensions, where the model's earlier replies had %d (did the server change models?)", errBadVectors, at, len(v), s.dim)
	case len(v) != s.dim:
		return fmt.Errorf("%w: %s has %d dimensions, where the vectors before it have %d", errBadVectors, at, len(v), s.dim)
	}
	var norm float64
	for d, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: %s has %v at dimension %d", errBadVectors, at, x, d)
		}
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return fmt.Errorf("%w: %s is all zeros, a vector with no direction (every cosine with it would read 0)", errBadVectors, at)
	}
	return nil
}

// checkAll checks vectors in order, vector i named by name(i).
func (s *vectorShape) checkAll(vs [][]float32, name func(i int) string) error {
	for i, v := range vs {
		if err := s.check(v, name(i)); err != nil {
			return err
		}
	}
	return nil
}

var null = []byte("null")

// decodeVector reads one vector from its JSON, refusing null (as the
// vector, or as a component, which encoding/json would decode as 0).
func decodeVector(raw json.RawMessage, at string) ([]float32, error) {
	if bytes.Contains(raw, null) {
		return nil, fmt.Errorf("%w: %s holds null where a number belongs", errBadVectors, at)
	}
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%w: %s is not a list of numbers: %v", errBadVectors, at, err)
	}
	return v, nil
}

// dimensions remembers the vector length each model of a provider has
// answered with, so that a reply of another length (a server that changed
// models under the same name, a gateway mixing backends) is refused on
// arrival instead of being compared with the vectors of the first.
type dimensions struct {
	mu sync.Mutex
	of map[string]int // op and model -> length
}

// shape is the check for a call of op to model.
func (d *dimensions) shape(op, model string) vectorShape {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.of[op+"\x00"+model]
	return vectorShape{dim: n, known: n > 0}
}

// learn records the length a call's vectors had, once they all passed.
func (d *dimensions) learn(op, model string, s vectorShape) {
	if s.dim == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.of == nil {
		d.of = map[string]int{}
	}
	if _, ok := d.of[op+"\x00"+model]; !ok {
		d.of[op+"\x00"+model] = s.dim
	}
}
