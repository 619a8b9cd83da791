package engine

import (
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

func TestEncodingFor(t *testing.T) {
	cases := map[string]tokenizer.Encoding{
		"gpt-4o-2024-08-06":                 tokenizer.O200kBase,
		"openai/gpt-4o-mini":                tokenizer.O200kBase,
		"o3-mini":                           tokenizer.O200kBase,
		"gpt-4-turbo":                       tokenizer.Cl100kBase,
		"gpt-3.5-turbo-0125":                tokenizer.Cl100kBase,
		"meta-llama/llama-3.1-70b-instruct": "",
		"anthropic/claude-3.5-sonnet":       "",
		"mock-generator-a":                  "",
	}
	for model, want := range cases {
		if got := encodingFor(model); got != want {
			t.Errorf("encodingFor(%q) = %q, want %q", model, got, want)
		}
	}
}

func TestCountTokens(t *testing.T) {
	// o200k_base: "hello" " world" are two tokens.
	if n, exact := countTokens("gpt-4o", "hello world"); n != 2 || !exact {
		t.Fatalf("gpt-4o: %d tokens (exact %v), want 2", n, exact)
	}
	// Counted again from the remembered count.
	if n, exact := countTokens("gpt-4o", "hello world"); n != 2 || !exact {
		t.Fatalf("gpt-4o again: %d (exact %v)", n, exact)
	}
	// No public tokenizer: 4 bytes per token, said to be approximate.
	if n, exact := countTokens("llama-3", "0123456789abcdef"); n != 5 || exact {
		t.Fatalf("llama-3: %d (exact %v), want 5, approximate", n, exact)
	}
}
