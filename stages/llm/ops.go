package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
}

type tokenVectorsBody struct {
	Inputs []tokenEntry `json:"inputs"`
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
