package cache

import (
	"sort"
	"strings"
	"sync"
)

// Memory is a Store held in process memory, for tests of the packages above
// the cache. It shares the encoding and every rule of the Badger store (Get
// without Parts, checksums, GC, bundles), so code that passes against Memory
// behaves the same against Badger; only durability differs.
type Memory struct {
	store
	mem *memBackend
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	mb := &memBackend{kv: map[string][]byte{}}
	return &Memory{store: newStore(mb, "memory"), mem: mb}
}

type memBackend struct {
	mu     sync.RWMutex
	kv     map[string][]byte
	closed bool
}

func (m *memBackend) has(key []byte) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return false, ErrClosed
	}
	_, ok := m.kv[string(key)]
	return ok, nil
}

func (m *memBackend) get(key []byte, fn func([]byte) error) error {
	m.mu.RLock()
	v, ok := m.kv[string(key)]
	closed := m.closed
	m.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case !ok:
		return errNoKey
	}
	// Values are never mutated in place (apply replaces them), so fn may read
	// v after the lock is released, and may call back into the store.
	return fn(v)
}

func (m *memBackend) scan(prefix string, keysOnly bool, fn func(key, val []byte) error) error {
	type kv struct {
		k string
		v []byte
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return ErrClosed
	}
	var hits []kv
	for k, v := range m.kv {
		if strings.HasPrefix(k, prefix) {
			hits = append(hits, kv{k, v})
		}
	}
	m.mu.RUnlock()
	sort.Slice(hits, func(i, j int) bool { return hits[i].k < hits[j].k })
	for _, h := range hits {
		v := h.v
		if keysOnly {
			v = nil
		}
		if err := fn([]byte(h.k), v); err != nil {
			return err
		}
	}
	return nil
}

func (m *memBackend) apply(units ...[]op) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	for _, ops := range units {
		for _, o := range ops {
			if o.del {
				delete(m.kv, string(o.key))
			} else {
				m.kv[string(o.key)] = o.val
			}
		}
	}
	return nil
}

// diskBytes reports the bytes held, standing in for disk use.
func (m *memBackend) diskBytes() (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var n int64
	for k, v := range m.kv {
		n += int64(len(k) + len(v))
	}
	return n, nil
}

func (m *memBackend) reclaim() error { return nil }

func (m *memBackend) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
