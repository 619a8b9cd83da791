package pack

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
)

func small(t *testing.T) []byte {
	t.Helper()
	m := &Manifest{Experiment: "exp", Output: "report.table1", Variables: map[string]string{"n": "3"}, Records: 2, BundleDigest: "sha256:00"}
	b, err := Write(m, map[string][]byte{
		ExperimentDir + "main.hcl":           []byte("stage \"x\" \"y\" {}\n"),
		ExperimentDir + "data/targets.jsonl": []byte("{\"id\":1}\n"),
		BundleName:                           []byte("bundle bytes"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTripIsDeterministic(t *testing.T) {
	a, b := small(t), small(t)
	if string(a) != string(b) {
		t.Fatal("two packs of the same contents differ")
	}
	m, entries, err := Read(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.Output != "report.table1" || m.Variables["n"] != "3" || len(entries) != 3 || string(entries[BundleName]) != "bundle bytes" {
		t.Fatalf("read back %+v, %d entries", m, len(entries))
	}
}

// TestEveryByteFlipIsRefused flips each byte of a small pack in turn (every
// bit of it, by xor 0xff): each variant is refused, with ErrRefused.
func TestEveryByteFlipIsRefused(t *testing.T) {
	orig := small(t)
	// Where each entry's bytes lie: a flip there must name that entry.
	spans := map[string][2]int{}
	for name, content := range map[string]string{
		ExperimentDir + "main.hcl":           "stage \"x\" \"y\" {}\n",
		ExperimentDir + "data/targets.jsonl": "{\"id\":1}\n",
		BundleName:                           "bundle bytes",
	} {
		at := strings.LastIndex(string(orig), content)
		spans[name] = [2]int{at, at + len(content)}
	}
	named := 0
	for i := range orig {
		b := append([]byte(nil), orig...)
		b[i] ^= 0xff
		_, _, err := Read(b)
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("byte %d of %d flipped: accepted (err %v)", i, len(orig), err)
		}
		for name, sp := range spans {
			if i >= sp[0] && i < sp[1] {
				if !strings.Contains(err.Error(), name+" differs from its manifest digest") {
					t.Errorf("byte %d (inside %s) flipped: refusal does not name it: %v", i, name, err)
				}
				named++
			}
		}
	}
	if named != 17+9+12 {
		t.Errorf("%d flips fell inside entries, want %d", named, 17+9+12)
	}
}

// TestRecomputedTrailerStillRefused: an entry edited and the trailer
// recomputed over it is still refused, naming the entry.
func TestRecomputedTrailerStillRefused(t *testing.T) {
	m := &Manifest{Experiment: "exp"}
	b, _ := Write(m, map[string][]byte{BundleName: []byte("aaaa")})
	forged := strings.Replace(string(b[:len(b)-33]), "aaaa", "bbbb", 1)
	f := []byte(forged)
	sum := sha256Sum(f)
	f = append(append(f, 'T'), sum...)
	_, _, err := Read(f)
	if err == nil || !strings.Contains(err.Error(), "records.bundle differs from its manifest digest") {
		t.Fatalf("forged pack: %v", err)
	}
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
