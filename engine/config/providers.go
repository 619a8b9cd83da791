package config

// provider blocks.

import (
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages/llm"
)

func (l *loader) evalProvider(d *decl) {
	a := d.content.Attributes
	p := &Provider{DeclRange: d.declRange}
	p.Name = d.name
	p.Kind, _ = l.str(a, "kind", nil)
	switch p.Kind {
	case "openai", "mock":
	default:
		l.errorf(a["kind"].Expr.Range().Ptr(), fmt.Sprintf("Unknown provider kind %q", p.Kind),
			`kind must be "openai" (any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server...) or "mock" (offline, synthetic answers).`)
	}
	p.BaseURL, _ = l.str(a, "base_url", nil)
	p.APIKeyEnv, _ = l.str(a, "api_key_env", nil)
	if k, ok := a["api_key_env"]; ok {
		p.APIKeyEnvRange = k.Expr.Range()
	} else {
		p.APIKeyEnvRange = d.declRange
	}
	p.OrgEnv, _ = l.str(a, "org_env", nil)
	p.Headers = l.stringMap(a, "headers")
	p.HeaderEnv = l.stringMap(a, "header_env")
	if s, ok := l.int(a, "seed", nil); ok {
		p.Seed = int64(s)
	}
	p.MaxConcurrency, _ = l.int(a, "max_concurrency", nil)
	p.RequestsPerMinute, _ = l.float(a, "requests_per_minute", nil)
	p.TokensPerMinute, _ = l.float(a, "tokens_per_minute", nil)
	p.MaxRetries = -1
	if n, ok := l.int(a, "max_retries", nil); ok {
		p.MaxRetries = n
	}
	p.TimeoutSeconds, _ = l.float(a, "timeout_seconds", nil)
	p.RepairAttempts = -1
	if n, ok := l.int(a, "repair_attempts", nil); ok {
		p.RepairAttempts = n
	}
	if p.Kind == "openai" && p.APIKeyEnv == "" {
		l.errorf(d.declRange.Ptr(), "Missing api_key_env",
			`An openai provider reads its key from an environment variable; name it with api_key_env = "OPENAI_API_KEY" (use any variable name; for a local server without auth, set it to a variable holding any value).`)
	}
	l.exp.Providers[d.name] = p
	l.values.ns["provider"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(d.name), "kind": cty.StringVal(p.Kind),
	})
}

// MissingKeys returns one diagnostic per openai provider in use whose API key
// variable is unset; the engine calls it before any call is made.
func (e *Experiment) MissingKeys(providers []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range providers {
		p := e.Providers[name]
		if p == nil || p.Kind != "openai" {
			continue
		}
		if os.Getenv(p.APIKeyEnv) == "" {
			r := p.APIKeyEnvRange
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Missing API key",
				Detail: fmt.Sprintf("Provider %q reads its API key from the environment variable %s, which is not set. Export it (export %s=...) before running; the key is never written to files, cache or logs.",
					name, p.APIKeyEnv, p.APIKeyEnv),
				Subject: &r,
			})
		}
	}
	return diags
}

// LLMProviders returns the llm.Provider of every provider block.
func (e *Experiment) LLMProviders() map[string]llm.Provider {
	out := map[string]llm.Provider{}
	for n, p := range e.Providers {
		out[n] = p.Provider
	}
	return out
}
