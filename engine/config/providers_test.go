package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm"
)

func loadSource(t *testing.T, src string) (*Experiment, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "exp.hcl")
	// An experiment needs a stage; these tests are about the providers.
	if err := os.WriteFile(path, []byte(src+"\nreport \"placeholder\" {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := Load(path, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return exp, path
}

// TestProviderSettings: each kind's block decodes into llm.Provider, shared
// settings as fields and kind-specific ones in Settings, with their ranges.
func TestProviderSettings(t *testing.T) {
	exp, _ := loadSource(t, `
variable "kind" {
  default = "tei"
}
provider "chat" {
  kind            = "openai"
  api_key_env     = "CHAT_KEY"
  org_env         = "CHAT_ORG"
  header_env      = { "X-Gateway" = "GATEWAY_TOKEN" }
  max_batch       = 16
  max_reply_bytes = 1048576
  max_retries     = 0
}
provider "emb" {
  kind     = "embeddings"
  base_url = "http://localhost:8000/v1"
}
provider "bert" {
  kind     = var.kind # decided at evaluation: checked there
  base_url = "http://localhost:8080"
  max_batch = 4
  requests_per_minute = 600
}
provider "mock" {
  kind = "mock"
  seed = 7
}
`)
	chat := exp.Providers["chat"]
	if chat.MaxReplyBytes != 1<<20 || chat.MaxRetries != 0 || chat.RepairAttempts != -1 || chat.Int("max_batch") != 16 ||
		chat.HeaderEnv["X-Gateway"] != "GATEWAY_TOKEN" || chat.APIKeyEnvRange.Start.Line != 7 {
		t.Errorf("chat = %+v", chat.Provider)
	}
	if emb := exp.Providers["emb"]; emb.Int("max_batch") != llm.DefaultEmbeddingBatch || emb.MaxRetries != -1 {
		t.Errorf("emb = %+v", emb.Provider)
	}
	bert := exp.Providers["bert"]
	if bert.Kind != "tei" || bert.Int("max_batch") != 4 || bert.RequestsPerMinute != 600 || bert.Ranges["max_batch"].Start.Line != 21 {
		t.Errorf("bert = %+v, ranges %v", bert.Provider, bert.Ranges)
	}
	if m := exp.LLMProviders()["mock"]; m.Seed != 7 || m.Kind != "mock" {
		t.Errorf("mock = %+v", m)
	}

	// A kind known only at evaluation is checked there, with the same errors.
	path := filepath.Join(t.TempDir(), "late.hcl")
	_ = os.WriteFile(path, []byte("variable \"k\" {\n  default = \"mock\"\n}\nprovider \"p\" {\n  kind     = var.k\n  base_url = \"http://x\"\n}\n"), 0o644)
	_, diags := Load(path, Options{})
	if len(diags) != 1 || diags[0].Summary != "Unsupported argument" || diags[0].Subject.Start.Line != 6 {
		t.Errorf("late kind: %v", diags)
	}
}

// TestMissingKeysGeneric: every secret environment variable a provider's
// kind declares is checked, at the setting's range.
func TestMissingKeysGeneric(t *testing.T) {
	for _, v := range []string{"CHAT_KEY", "CHAT_ORG", "GATEWAY_TOKEN", "TEI_KEY"} {
		t.Setenv(v, "")
	}
	exp, _ := loadSource(t, `
provider "chat" {
  kind        = "openai"
  api_key_env = "CHAT_KEY"
  org_env     = "CHAT_ORG"
  header_env  = { "X-Gateway" = "GATEWAY_TOKEN" }
}
provider "bert" {
  kind        = "tei"
  base_url    = "http://localhost:8080"
  api_key_env = "TEI_KEY"
}
provider "local" {
  kind     = "tei"
  base_url = "http://localhost:8080"
}
provider "mock" {
  kind = "mock"
}
`)
	var got []string
	for _, d := range exp.MissingKeys([]string{"chat", "bert", "local", "mock"}) {
		got = append(got, d.Summary+"@"+strconv.Itoa(d.Subject.Start.Line))
		if !strings.Contains(d.Detail, "export ") {
			t.Errorf("detail says not how to fix it: %s", d.Detail)
		}
	}
	want := "Missing API key@4,Missing header value@6,Missing organisation id@5,Missing API key@11" // in the kind's settings order
	if strings.Join(got, ",") != want {
		t.Errorf("MissingKeys = %s\nwant %s", strings.Join(got, ","), want)
	}
	t.Setenv("GATEWAY_TOKEN", "gw-set")
	t.Setenv("CHAT_ORG", "org-set")
	if n := len(exp.MissingKeys([]string{"chat"})); n != 1 {
		t.Errorf("with the org and header set: %d diagnostics, want 1 (the key)", n)
	}
}
