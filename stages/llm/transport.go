package llm

import (
	"bytes"
	"context"
	"io"
	"net/http"
)

// transport adds the provider's extra headers to every request and, for the
// attempt that asked for it through the context, keeps the reply's status,
// headers and (successful) body. go-openai's errors drop the headers that
// carry Retry-After and the rate-limit resets, and its decoded message drops
// the "reasoning" field some servers use, so both are read here.
type transport struct {
	base    http.RoundTripper
	headers http.Header
}

type captureKey struct{}

// capture is what the transport saw of one attempt's reply.
type capture struct {
	keepBody bool // chat replies only: embedding replies are large and have no reasoning
	status   int
	header   http.Header
	body     bytes.Buffer
}

func withCapture(ctx context.Context, c *capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context()) // a RoundTripper must not modify its request
		for k, v := range t.headers {
			r.Header[k] = v
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if c, ok := r.Context().Value(captureKey{}).(*capture); ok {
		c.status = resp.StatusCode
		c.header = resp.Header
		if c.keepBody && resp.StatusCode >= 200 && resp.StatusCode < 300 {
			resp.Body = &teeBody{ReadCloser: resp.Body, w: &c.body}
		}
	}
	return resp, nil
}

type teeBody struct {
	io.ReadCloser
	w *bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.Write(p[:n])
	return n, err
}
