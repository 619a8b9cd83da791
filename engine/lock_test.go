package engine

import (
	"os"
	"reflect"
	"testing"
)

// TestDriftWords: each change of a lock is named once, in words, and a
// model with no answer in the current lock (not cached yet) has not drifted.
func TestDriftWords(t *testing.T) {
	base := func() *Lock {
		return &Lock{Experiment: "exp",
			Models:    []LockModel{{Provider: "openai", Requested: "gpt-4o", Served: []string{"gpt-4o-2024-08-06"}, Fingerprints: []string{"fp_a"}}},
			Prompts:   map[string]string{"stage.generate_ideas.main": "sha256:1"},
			Datasets:  map[string]string{"data/targets.jsonl": "sha256:2"},
			Variables: map[string]string{"n": "sha256:3"},
			Stages:    map[string]LockStage{"stage.generate_ideas.main": {Nodes: 3, KeySet: "sha256:4"}}}
	}
	cases := []struct {
		name   string
		change func(l *Lock)
		want   []string
	}{
		{"nothing", func(*Lock) {}, nil},
		{"served model", func(l *Lock) { l.Models[0].Served = []string{"gpt-4o-2024-11-20"} },
			[]string{"served model changed: gpt-4o-2024-08-06 -> gpt-4o-2024-11-20 (provider openai, model gpt-4o)"}},
		{"fingerprint", func(l *Lock) { l.Models[0].Fingerprints = []string{"fp_a", "fp_b"} },
			[]string{"fingerprint changed: fp_a -> fp_a, fp_b (provider openai, model gpt-4o)"}},
		{"not cached yet", func(l *Lock) { l.Models = nil }, nil},
		{"prompt", func(l *Lock) { l.Prompts["stage.generate_ideas.main"] = "sha256:9" }, []string{"prompt changed: stage.generate_ideas.main"}},
		{"dataset", func(l *Lock) { l.Datasets["data/targets.jsonl"] = "sha256:9" }, []string{"dataset digest changed: data/targets.jsonl"}},
		{"dataset renamed", func(l *Lock) { l.Datasets = map[string]string{"data/t2.jsonl": "sha256:2"} },
			[]string{"dataset no longer read: data/targets.jsonl", "dataset new since the lock: data/t2.jsonl"}},
		{"variable", func(l *Lock) { l.Variables["n"] = "sha256:9" }, []string{"variable changed: n"}},
		{"keys", func(l *Lock) { l.Stages["stage.generate_ideas.main"] = LockStage{Nodes: 4, KeySet: "sha256:9"} },
			[]string{"stage keys changed: stage.generate_ideas.main (3 -> 4 nodes)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := base()
			c.change(cur)
			if got := Drift(base(), cur); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Drift = %q, want %q", got, c.want)
			}
		})
	}
	if Drift(nil, base()) != nil {
		t.Error("no committed lock: want no drift")
	}
}

// TestLockTextRoundTrips: the lock's text reads back to the same lock and
// starts with its header comment.
func TestLockTextRoundTrips(t *testing.T) {
	l := &Lock{Experiment: "exp", Datasets: map[string]string{"b": "2", "a": "1"}}
	path := t.TempDir() + "/ideaflow.lock"
	if err := writeTestFile(path, l.Marshal()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLock(path)
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if missing, err := ReadLock(path + ".none"); missing != nil || err != nil {
		t.Errorf("missing lock: %v, %v; want nil, nil", missing, err)
	}
}

func writeTestFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
