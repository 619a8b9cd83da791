package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages/similarity"
)

// The bodies of the service operations (see OpEmbeddings, OpTokenEmbeddings).

type inputBody struct {
	Input []string `json:"input"`
}

type vectorsBody struct {
	Vectors [][]float32 `json:"vectors"`
}

type tokenEntry struct {
	Tokens  []string    `json:"tokens"`
	Vectors [][]float32 `json:"vectors"`
	// Special flags the special tokens ([CLS], [SEP], <s>, ...) when a
	// request keeps them (SpecialTokensKeep); nil when they were dropped.
	Special []bool `json:"special,omitempty"`
}

type tokenVectorsBody struct {
	Inputs []tokenEntry `json:"inputs"`
}

type matchingRequest struct {
	Reference  string   `json:"reference"`
	Candidates []string `json:"candidates"`
	// Layer is the hidden layer (OpLayerTokenMatching only) and
	// SpecialTokens "keep" or "" (dropped): see OpLayerTokenMatching.
	Layer         *int   `json:"layer,omitempty"`
	SpecialTokens string `json:"special_tokens,omitempty"`
}

type tokenMatch struct {
	Tokens []string `json:"tokens"`
	similarity.Matching
	Special []bool `json:"special,omitempty"`
}

type tokenMatchingBody struct {
	ReferenceTokens  []string     `json:"reference_tokens"`
	ReferenceSpecial []bool       `json:"reference_special,omitempty"`
	Matches          []tokenMatch `json:"matches"`
}

// decodeMatching reads an OpTokenMatching body as the texts to embed: the
// reference first, then the candidates.
func decodeMatching(provider string, req ServiceRequest) ([]string, error) {
	var b matchingRequest
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return nil, &APIError{Provider: provider, Message: fmt.Sprintf("%s request body is not {\"reference\": \"text\", \"candidates\": [\"text\", ...]}: %v", req.Op, err)}
	}
	return append([]string{b.Reference}, b.Candidates...), nil
}

// matchTokens reduces the token embeddings of a reference (entries[0]) and
// its candidates to OpTokenMatching's reply.
func matchTokens(entries []tokenEntry) tokenMatchingBody {
	widen := func(vs [][]float32) [][]float64 {
		out := make([][]float64, len(vs))
		for i, v := range vs {
			out[i] = make([]float64, len(v))
			for d, x := range v {
				out[i][d] = float64(x)
			}
		}
		return out
	}
	ref := widen(entries[0].Vectors)
	body := tokenMatchingBody{ReferenceTokens: nonNil(entries[0].Tokens), ReferenceSpecial: entries[0].Special, Matches: make([]tokenMatch, 0, len(entries)-1)}
	for _, c := range entries[1:] {
		body.Matches = append(body.Matches, tokenMatch{Tokens: nonNil(c.Tokens), Matching: similarity.Match(widen(c.Vectors), ref), Special: c.Special})
	}
	return body
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// errIncompleteEmbeddings: fewer vectors than inputs, or indexes out of
// range. Retried: like a 200 without choices, it is a gateway or server
// hiccup more often than a permanent answer.
var errIncompleteEmbeddings = errors.New("reply has missing or misnumbered embeddings")

// decodeInput reads an operation's {"input": [...]} body.
func decodeInput(provider string, req ServiceRequest) ([]string, error) {
	var b inputBody
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return nil, &APIError{Provider: provider, Message: fmt.Sprintf("%s request body is not {\"input\": [\"text\", ...]}: %v", req.Op, err)}
	}
	return b.Input, nil
}

// encodeBody marshals a normalised reply body; its types cannot fail.
func encodeBody(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llm: encode reply body: %v", err))
	}
	return b
}

// unservedOp is the error for an operation the kind does not serve.
func unservedOp(provider string, k KindInfo, op string) error {
	var servers []string
	for _, other := range Kinds() {
		if other.Serves(op) {
			servers = append(servers, other.Name)
		}
	}
	served := "no operations"
	if len(k.Ops) > 0 {
		served = strings.Join(k.Ops, ", ")
	}
	return &APIError{Provider: provider, Message: fmt.Sprintf("kind %q does not serve operation %q (it serves %s); kinds serving it: %s",
		k.Name, op, served, strings.Join(servers, ", "))}
}

// chunks cuts inputs into batches of at most n.
func chunks(inputs []string, n int) [][]string {
	var out [][]string
	for len(inputs) > n {
		out = append(out, inputs[:n])
		inputs = inputs[n:]
	}
	if len(inputs) > 0 {
		out = append(out, inputs)
	}
	return out
}
