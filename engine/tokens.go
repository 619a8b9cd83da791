package engine

import (
	"crypto/sha256"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
)

// Token counts for estimates. OpenAI's models have public tokenizers, and
// github.com/tiktoken-go/tokenizer embeds their tables (o200k_base,
// cl100k_base), so plan counts their prompts exactly, offline. Every other
// model is estimated at 4 bytes per token and the estimate says so.

// encodingFor names the tokenizer of a model, or "" when none is public.
// Gateway prefixes ("openai/gpt-4o-mini") and dated snapshots
// ("gpt-4o-2024-08-06") are accepted.
func encodingFor(model string) tokenizer.Encoding {
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		if !strings.HasPrefix(name, "openai/") {
			return "" // another maker's model behind a gateway
		}
		name = name[i+1:]
	}
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss"} {
		if strings.HasPrefix(name, p) {
			return tokenizer.O200kBase
		}
	}
	for _, p := range []string{"gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada"} {
		if strings.HasPrefix(name, p) {
			return tokenizer.Cl100kBase
		}
	}
	return ""
}

var (
	codecs sync.Map // tokenizer.Encoding -> tokenizer.Codec
	// counted remembers token counts of texts seen: a target's reference
	// block recurs in every sample and model of a plan, and is counted once.
	counted sync.Map // [32]byte (encoding + text digest) -> int64
)

// countTokens counts text in model's tokenizer; exact is false when the
// model has no public tokenizer and the count is the 4-bytes estimate.
func countTokens(model, text string) (n int64, exact bool) {
	enc := encodingFor(model)
	if enc == "" {
		return int64(len(text)/4 + 1), false
	}
	key := sha256.Sum256([]byte(string(enc) + "\x00" + text))
	if v, ok := counted.Load(key); ok {
		return v.(int64), true
	}
	c, ok := codecs.Load(enc)
	if !ok {
		codec, err := tokenizer.Get(enc)
		if err != nil {
			return int64(len(text)/4 + 1), false
		}
		c, _ = codecs.LoadOrStore(enc, codec)
	}
	ids, _, err := c.(tokenizer.Codec).Encode(text)
	if err != nil {
		return int64(len(text)/4 + 1), false
	}
	n = int64(len(ids))
	if countedSize.Add(1) <= maxCounted {
		counted.Store(key, n)
	}
	return n, true
}

// maxCounted bounds the memory of remembered counts (about 100 bytes each).
const maxCounted = 200_000

var countedSize atomic.Int64
