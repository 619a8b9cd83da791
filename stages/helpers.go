package stages

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages/format"
)

// Helpers every stage package needs, kept here once: benchmark packages
// import shared packages, never each other.

// RequireInput returns the Input param name of p, or a *ParamError saying it
// is required.
func RequireInput(p Params, name string) (*Upstream, error) {
	u := p.Input(name)
	if u == nil {
		return nil, ParamErrorf(name, "%s is required", name)
	}
	return u, nil
}

// RenderParam renders the template text held by param. A broken template
// is that param's fault, whether found at layout (on sample data) or in a
// node, so the error is a *ParamError.
func RenderParam(param, name, text string, data any) (string, error) {
	s, err := Render(name, text, data)
	if err != nil {
		return "", &ParamError{Param: param, Err: err}
	}
	return s, nil
}

// UserMessage joins a rendered prompt and the answer-format instructions.
// Trimming makes a template file with or without a final newline send the
// same request, so moving an inline prompt into a file keeps the cache.
func UserMessage(prompt string, spec format.Spec) string {
	prompt = strings.TrimSpace(prompt)
	if ins := strings.TrimSpace(format.Instructions(spec)); ins != "" {
		return prompt + "\n\n" + ins
	}
	return prompt
}

// EncodeOutput encodes v as a node's output (canonical JSON: encoding/json
// sorts map keys and writes struct fields in order).
func EncodeOutput(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	return b, nil
}
