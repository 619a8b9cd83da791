package batchexec

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/pricing"
)

// A re-ask's custom_id differs from the node key and from every other
// re-ask's, is stable across runs (a resumed run finds it in the journal)
// and is 64 hex digits, which every batch API accepts.
func TestCustomID(t *testing.T) {
	key := strings.Repeat("ab", 32)
	seen := map[string]int{}
	for n := 0; n < 4; n++ {
		id := customID(key, n)
		if id != customID(key, n) || len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Errorf("custom_id %d: %q", n, id)
		}
		if m, dup := seen[id]; dup {
			t.Errorf("attempts %d and %d share %s", m, n, id)
		}
		seen[id] = n
	}
	if customID(key, 0) != key {
		t.Errorf("the first request's custom_id is not the node key")
	}
}

// A task's completions are priced each at its mode's rates, cached
// tokens at the cached rate, and the provenance names the batches.
func TestAccount(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	p := stages.Price{InputPerMTok: 2, OutputPerMTok: 8, BatchInputPerMTok: f(1), BatchOutputPerMTok: f(4), BatchCachedInputPerMTok: f(0.25)}
	u := llm.Usage{InputTokens: 100, OutputTokens: 10, CachedTokens: 40}
	tests := []struct {
		name     string
		done     []completion
		cost     float64
		obtained string
	}{
		{"one batch line", []completion{{u, pricing.Batch, "batch_1"}}, 110e-6, "batch batch_1 of provider p"},
		{"a re-ask in a later batch", []completion{{u, pricing.Batch, "batch_2"}, {u, pricing.Batch, "batch_1"}}, 220e-6, "batches batch_1, batch_2 of provider p"},
		{"asked again synchronously", []completion{{u, pricing.Batch, "batch_1"}, {u, pricing.Sync, ""}}, 110e-6 + 280e-6,
			"batch batch_1 of provider p (1 of 2 requests asked synchronously)"},
		{"synchronously only", []completion{{u, pricing.Sync, ""}}, 280e-6, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := &taskCall{key: "k", done: tt.done}
			got, obtained := tc.account(p, "p")
			if d := got.CostUSD - tt.cost; d > 1e-15 || d < -1e-15 || got.CachedTokens != 40*int64(len(tt.done)) || obtained != tt.obtained {
				t.Errorf("cost %v, cached %d, obtained %q; want %v, %d, %q", got.CostUSD, got.CachedTokens, obtained, tt.cost, 40*len(tt.done), tt.obtained)
			}
		})
	}
}

// The batch executor is linked by the CLI only: the engine must not
// depend on it, nor it on the engine (only on engine/executor).
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/ideaflow/ideaflow/engine" || dep == "github.com/ideaflow/ideaflow/cache" {
			t.Errorf("engine/batchexec depends on %s", dep)
		}
	}
}
