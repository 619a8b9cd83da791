package executor

import (
	"encoding/json"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// A provider's settings survive the trip in a task: a kind-specific int
// (max_batch, kept in Settings, read by Provider.Int) comes back an int,
// and the digest that tells a worker "same settings" matches.
func TestSettingsRoundTrip(t *testing.T) {
	p := llm.NewProvider("emb", "openai")
	p.APIKeyEnv = "EMB_KEY"
	p.HeaderEnv = map[string]string{"X-Team": "EMB_TEAM"}
	if err := p.Set("max_batch", 8); err != nil {
		t.Fatal(err)
	}
	if err := p.Set("n_choices", true); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&Task{Provider: "emb", Settings: &p})
	if err != nil {
		t.Fatal(err)
	}
	var back Task
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Settings.Settings["max_batch"].(float64); !ok {
		t.Fatalf("JSON gave max_batch as %T: the case this guards is gone", back.Settings.Settings["max_batch"])
	}
	got := NormalizeSettings(*back.Settings)
	if got.Int("max_batch") != 8 || !NChoices(got) || got.APIKeyEnv != "EMB_KEY" || got.HeaderEnv["X-Team"] != "EMB_TEAM" {
		t.Fatalf("settings after the trip: %+v", got)
	}
	if SettingsDigest(got) != SettingsDigest(p) {
		t.Fatalf("digest %s after the trip, %s before", SettingsDigest(got), SettingsDigest(p))
	}
}
