package cache

import (
	"testing"
)

func TestMemoAndHas(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		rec := sampleRecord(1)
		if ok, err := s.Has(rec.Key); err != nil || ok {
			t.Fatalf("Has on empty store = %v, %v", ok, err)
		}
		memo := []byte(rec.Key + "\x00digest\x00c")
		if err := s.PutIndexed(rec, "exp:stage.x/p1", "in-1", memo); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Has(rec.Key); err != nil || !ok {
			t.Fatalf("Has after PutIndexed = %v, %v", ok, err)
		}
		if k, ok, err := s.Latest("exp:stage.x/p1"); err != nil || !ok || k != rec.Key {
			t.Fatalf("Latest = %q %v %v", k, ok, err)
		}
		v, ok, err := s.Memo("in-1")
		if err != nil || !ok || string(v) != string(memo) {
			t.Fatalf("Memo = %q %v %v", v, ok, err)
		}
		if _, ok, _ := s.Memo("in-2"); ok {
			t.Fatal("memo of an unknown input key")
		}
		if err := s.SetMemo("in-3", nil); err == nil {
			t.Fatal("a memo value without a record key must be refused")
		}
		other := sampleRecord(2)
		if err := s.Put(other); err != nil {
			t.Fatal(err)
		}
		if err := s.SetMemo("in-2", []byte(other.Key)); err != nil {
			t.Fatal(err)
		}
		// GC keeps the memo of a kept record and drops the memo of a removed one.
		if removed, err := s.GC(map[string]bool{rec.Key: true}); err != nil || removed != 1 {
			t.Fatalf("GC removed %d, %v", removed, err)
		}
		if _, ok, _ := s.Memo("in-1"); !ok {
			t.Error("GC dropped the memo of a kept record")
		}
		if _, ok, _ := s.Memo("in-2"); ok {
			t.Error("GC kept the memo of a removed record")
		}
	})
}
