package llm

import (
	"strings"
	"testing"
)

// TestKinds: the registry lists every kind sorted; each declares documented
// settings, and New gives a client that serves what the kind declares.
func TestKinds(t *testing.T) {
	if got := strings.Join(KindNames(), ","); got != "baseline,embeddings,mock,openai,tei,transformers" {
		t.Fatalf("kinds = %s", got)
	}
	env := testEnv(map[string]string{"K": "sk-registry-key"})
	for _, k := range Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			if k.Doc == "" || k.DefaultConcurrency < 1 || (!k.Chat && len(k.Ops) == 0) {
				t.Errorf("incomplete declaration: %+v", k)
			}
			for _, s := range k.Settings {
				if s.Doc == "" || s.Type.check(zero(s.Type)) != nil || (s.SecretEnv && s.Holds == "") {
					t.Errorf("setting %s: incomplete declaration %+v", s.Name, s)
				}
			}
			p := NewProvider("p", k.Name)
			if _, ok := k.Setting("base_url"); ok {
				p.BaseURL = "http://127.0.0.1:1/v1"
			}
			if s, ok := k.Setting("api_key_env"); ok && s.Required {
				p.APIKeyEnv = "K"
			}
			c, err := New(p, env)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.(ServiceClient); ok != (len(k.Ops) > 0) {
				t.Errorf("ServiceClient implemented: %v, operations declared: %v", ok, k.Ops)
			}
			if c.Synthetic() != k.Synthetic {
				t.Errorf("Synthetic() = %v, declared %v", c.Synthetic(), k.Synthetic)
			}
			// Every kind that makes requests can be declared unavailable.
			if a, ok := c.(Availability); ok == k.Synthetic || (ok && a.Unavailable() != nil) {
				t.Errorf("Availability implemented: %v, synthetic: %v", ok, k.Synthetic)
			}
			if !k.Chat {
				_, err := c.Complete(bg, userRequest("m", "hi"))
				if err == nil || !strings.Contains(err.Error(), `kind "`+k.Name+`" serves no chat completions`) {
					t.Errorf("Complete on a kind without chat: %v", err)
				}
			}
		})
	}
}

func zero(t SettingType) any {
	switch t {
	case TypeString:
		return ""
	case TypeInt:
		return 0
	case TypeNumber:
		return 0.0
	case TypeBool:
		return false
	}
	return map[string]string{}
}

func TestProviderSet(t *testing.T) {
	tests := []struct {
		kind, name string
		v          any
		want       string // error; "" for none
	}{
		{"tei", "max_batch", 8, ""},
		{"openai", "org_env", "ORG", ""},
		{"tei", "org_env", "ORG", `kind "tei" has no setting "org_env" (it has: base_url, endpoint_identity, api_key_env, headers, header_env, max_concurrency, requests_per_minute, tokens_per_minute, max_retries, timeout_seconds, max_reply_bytes, breaker_failures, breaker_seconds, max_batch)`},
		{"mock", "max_batch", 2, `kind "mock" has no setting "max_batch"`},
		{"tei", "max_batch", "8", "max_batch: a int setting cannot hold string"},
		{"nope", "seed", 1, `unknown kind "nope" (registered kinds: baseline, embeddings, mock, openai, tei, transformers)`},
	}
	for _, tt := range tests {
		p := NewProvider("p", tt.kind)
		err := p.Set(tt.name, tt.v)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s.Set(%s, %v) = %v, want %q", tt.kind, tt.name, tt.v, err, tt.want)
		}
	}
	p := NewProvider("p", "tei")
	if p.Int("max_batch") != DefaultTEIBatch {
		t.Errorf("unset max_batch = %d, want the default %d", p.Int("max_batch"), DefaultTEIBatch)
	}
	_ = p.Set("max_batch", 0)
	if _, err := New(p); err == nil || !strings.Contains(err.Error(), "max_batch must be 1 to 100000, got 0") {
		t.Errorf("max_batch 0: %v", err)
	}
}
