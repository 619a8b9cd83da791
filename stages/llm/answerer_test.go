package llm

import (
	"strings"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"HTTPS://user:secret@API.OpenAI.com:443/v1/?x=1#frag", "https://api.openai.com/v1"},
		{"http://localhost:80/v1//", "http://localhost/v1"},
		{"http://localhost:8000/v1", "http://localhost:8000/v1"},
		{"https://gw.example:8443/V1", "https://gw.example:8443/V1"}, // paths are case-sensitive
		{"http://[::1]:8000/v1", "http://[::1]:8000/v1"},
		{"http://[::1]/v1", "http://[::1]/v1"},
		{"https://openrouter.ai/api/v1/", "https://openrouter.ai/api/v1"},
	} {
		got, err := NormalizeURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"localhost:8000", "ftp://x", "://", ""} {
		if got, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", bad, got)
		}
	}
}

// TestIdentifyPerKind: who answers each kind's calls, as keys see it.
func TestIdentifyPerKind(t *testing.T) {
	provider := func(kind string, set map[string]any) Provider {
		p := NewProvider("p", kind)
		for k, v := range set {
			if err := p.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		p    Provider
		want Answerer
	}{
		{"mock", provider("mock", map[string]any{"seed": 7}), Answerer{Class: ClassMock, Identity: "seed 7", Synthetic: true}},
		{"mock, default seed", provider("mock", nil), Answerer{Class: ClassMock, Identity: "seed 0", Synthetic: true}},
		{"baseline", provider("baseline", map[string]any{"seed": 3}), Answerer{Class: ClassBaseline, Identity: "seed 3"}},
		{"openai, default URL", provider("openai", map[string]any{"api_key_env": "K"}), Answerer{Class: ClassEndpoint, Identity: "https://api.openai.com/v1"}},
		{"openai", provider("openai", map[string]any{"base_url": "http://LocalHost:8000/v1/"}), Answerer{Class: ClassEndpoint, Identity: "http://localhost:8000/v1"}},
		{"openai, declared URL", provider("openai", map[string]any{"base_url": "https://openrouter.ai/api/v1", "endpoint_identity": "https://API.openai.com/v1/"}),
			Answerer{Class: ClassEndpoint, Identity: "https://api.openai.com/v1"}},
		{"openai, declared name", provider("openai", map[string]any{"base_url": "https://openrouter.ai/api/v1", "endpoint_identity": " team-gateway "}),
			Answerer{Class: ClassEndpoint, Identity: "team-gateway"}},
		{"embeddings", provider("embeddings", map[string]any{"base_url": "http://emb:8000/v1"}), Answerer{Class: ClassEndpoint, Identity: "http://emb:8000/v1"}},
		{"tei", provider("tei", map[string]any{"base_url": "http://tei:8080/"}), Answerer{Class: ClassEndpoint, Identity: "http://tei:8080"}},
	} {
		got, err := tc.p.Identify()
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	// An openai provider and an embeddings provider at one server are one
	// answerer: they share embeddings.
	a, _ := provider("openai", map[string]any{"base_url": "http://srv/v1"}).Identify()
	b, _ := provider("embeddings", map[string]any{"base_url": "http://SRV/v1/"}).Identify()
	if a != b {
		t.Errorf("one server, two kinds: %+v and %+v", a, b)
	}
	if _, err := provider("embeddings", nil).Identify(); err == nil || !strings.Contains(err.Error(), "set base_url") {
		t.Errorf("embeddings without base_url: %v", err)
	}
	if got := (Answerer{Class: ClassMock, Identity: "seed 7"}).String(); got != "mock seed 7" {
		t.Errorf("String = %q", got)
	}
}
