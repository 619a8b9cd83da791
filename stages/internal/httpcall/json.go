package httpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// StatusError is a non-2xx reply to DoJSON, with its (scrubbed) body.
type StatusError struct {
	Status int
	Body   []byte
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, Excerpt(string(e.Body), ErrorExcerpt))
}

// PostJSON posts in as JSON to url and decodes a 2xx reply into out; see
// DoJSON.
func PostJSON(ctx context.Context, hc *http.Client, url string, header http.Header, in, out any) error {
	return DoJSON(ctx, hc, http.MethodPost, url, header, in, out)
}

// DoJSON sends one request, with in as its JSON body (none when in is nil),
// and decodes a 2xx reply into out. A non-2xx reply is a *StatusError; a
// reply that does not decode is an error wrapping the decoder's.
func DoJSON(ctx context.Context, hc *http.Client, method, url string, header http.Header, in, out any) error {
	b, err := DoJSONRaw(ctx, hc, method, url, header, in)
	if err != nil {
		return err
	}
	return Decode(b, out)
}

// Decode decodes a reply body into out, saying so when the body holds
// NaN or Infinity: some servers' encoders (Python's json) write non-finite
// numbers so, and JSON cannot carry them.
func Decode(b []byte, out any) error {
	if err := json.Unmarshal(b, out); err != nil {
		if bytes.Contains(b, []byte("NaN")) || bytes.Contains(b, []byte("Infinity")) {
			return fmt.Errorf("decode reply: %w (it holds NaN or Infinity, which JSON cannot carry: the server computed values that are not finite numbers)", err)
		}
		return fmt.Errorf("decode reply: %w", err)
	}
	return nil
}

// DoJSONRaw is DoJSON returning the 2xx reply's body undecoded, for a
// client that checks the bytes before decoding them.
func DoJSONRaw(ctx context.Context, hc *http.Client, method, url string, header http.Header, in any) ([]byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{Status: resp.StatusCode, Body: b}
	}
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	return b, nil
}

// ErrorMessage finds the message in an error body: OpenAI-style
// {"error": {"message": ..., "code": ...}}, text-embeddings-inference-style
// {"error": "...", "error_type": "..."}, or {"message": ...}; otherwise
// the body's excerpt. code is the error code or type when one is given.
func ErrorMessage(body []byte) (msg, code string) {
	var v struct {
		Error     json.RawMessage `json:"error"`
		ErrorType string          `json:"error_type"`
		Message   string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Type    string `json:"type"`
		}
		var flat string
		switch {
		case json.Unmarshal(v.Error, &flat) == nil && flat != "":
			return Excerpt(flat, ErrorExcerpt), v.ErrorType
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			if nested.Code != nil {
				code = fmt.Sprint(nested.Code)
			}
			return Excerpt(nested.Message, ErrorExcerpt), ErrorCode(code, nested.Type)
		case v.Message != "":
			return Excerpt(v.Message, ErrorExcerpt), ""
		}
	}
	return Excerpt(strings.TrimSpace(string(body)), ErrorExcerpt), ""
}
