package cache

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sampleRecord is a deterministic record; i selects its key and content.
func sampleRecord(i int) *Record {
	output := []byte(fmt.Sprintf(`{"idea":%q,"index":%d}`, strings.Repeat("an idea about catalysis ", 1+i%7), i))
	return &Record{
		Key:          fmt.Sprintf("%064x", i+1),
		Stage:        "stage.generate_ideas.main[\"gpt-4o\"]",
		Address:      fmt.Sprintf("stage.generate_ideas.main[\"gpt-4o\"].item[%d].sample[%d]", i/3, i%3),
		Output:       output,
		OutputDigest: DigestOutput(output),
		Usage:        Usage{InputTokens: int64(100 + i), OutputTokens: int64(50 + i), CostUSD: 0.25, LatencyMS: int64(10 * i), Attempts: 1 + i%2},
		Parts: []Part{
			{Name: "stage.type", Digest: "d1", Display: "generate_ideas"},
			{Name: "model.temperature", Digest: fmt.Sprintf("t%d", i), Display: "0.7"},
		},
		Model:       "gpt-4o-2024-08-06",
		ServedModel: "gpt-4o-2024-08-06",
		Fingerprint: "fp_1",
		Raw:         "Idea 1: ...",
		Reasoning:   "",
		Attempts:    []Attempt{{Raw: "Idea 1: ...", Status: 200, Duration: 1200}},
		Synthetic:   i%2 == 0,
		CreatedAt:   time.Date(2025, 3, 1, 12, 0, i%60, 5000, time.UTC),
	}
}

// withoutParts is what Get returns for rec.
func withoutParts(rec *Record) *Record {
	c := *rec
	c.Parts = nil
	return &c
}

// backends runs fn against a fresh store of every implementation.
func backends(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Helper()
	for _, b := range []struct {
		name string
		open func(t *testing.T) Store
	}{
		{"memory", func(*testing.T) Store { return NewMemory() }},
		{"badger", func(t *testing.T) Store { return openTemp(t) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			t.Cleanup(func() { s.Close() })
			fn(t, s)
		})
	}
}

func openTemp(t testing.TB, opts ...Option) *Badger {
	t.Helper()
	s, err := Create(t.TempDir(), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func mustPut(t testing.TB, s Store, recs ...*Record) {
	t.Helper()
	for _, r := range recs {
		if err := s.Put(r); err != nil {
			t.Fatalf("Put %s: %v", r.Key, err)
		}
	}
}

func assertRecord(t *testing.T, s Store, want *Record) {
	t.Helper()
	got, err := s.Get(want.Key)
	if err != nil {
		t.Fatalf("Get %s: %v", want.Key, err)
	}
	if !reflect.DeepEqual(got, withoutParts(want)) {
		t.Fatalf("Get %s:\n got %+v\nwant %+v", want.Key, got, withoutParts(want))
	}
	parts, err := s.Parts(want.Key)
	if err != nil {
		t.Fatalf("Parts %s: %v", want.Key, err)
	}
	if !reflect.DeepEqual(parts, want.Parts) {
		t.Fatalf("Parts %s: got %+v, want %+v", want.Key, parts, want.Parts)
	}
}

func recordKeys(t *testing.T, s Store) []string {
	t.Helper()
	var keys []string
	if err := s.List(func(e Entry) error {
		keys = append(keys, e.Key)
		return nil
	}); err != nil {
		t.Fatalf("List: %v", err)
	}
	return keys
}

// snapshotDir digests every file under dir by path, so a test can tell that
// a command changed nothing.
func snapshotDir(t testing.TB, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
