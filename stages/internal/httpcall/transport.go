package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Transport adds a provider's extra headers to every request and reads every
// reply body whole, up to a size cap, masking secrets in it before anything
// else sees it: the API library decoding the reply, error messages, logs,
// answers. For the attempt that asked for it through the context, it keeps
// the reply's status and headers (API libraries drop the headers that carry
// Retry-After and the rate-limit resets) and, optionally, the body.
type Transport struct {
	Base     http.RoundTripper // nil: http.DefaultTransport
	Headers  http.Header
	Scrub    *Scrubber
	MaxReply int64 // largest reply body accepted, in bytes; 0: no cap
}

type captureKey struct{}

// Capture is what the transport saw of one attempt's reply.
type Capture struct {
	KeepBody bool // keep a successful body in Body
	Status   int
	Header   http.Header
	Body     bytes.Buffer
	// TooLarge is set when the reply was over the cap; the body the caller
	// reads then fails with ErrReplyTooLarge.
	TooLarge bool
}

// WithCapture makes the transport record the reply of requests made with ctx in c.
func WithCapture(ctx context.Context, c *Capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

// ErrReplyTooLarge is the read error of a body over the cap.
var ErrReplyTooLarge = fmt.Errorf("reply body over the size cap")

func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.Headers) > 0 {
		r = r.Clone(r.Context()) // a RoundTripper must not modify its request
		for k, v := range t.Headers {
			r.Header[k] = v
		}
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	c, _ := r.Context().Value(captureKey{}).(*Capture)
	if c != nil {
		c.Status = resp.StatusCode
		c.Header = resp.Header
	}
	body, readErr := t.read(resp)
	resp.Body.Close()
	if readErr == ErrReplyTooLarge && c != nil {
		c.TooLarge = true
	}
	body = t.Scrub.ScrubBytes(body)
	if c != nil && c.KeepBody && readErr == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		c.Body.Write(body)
	}
	resp.Body = &readBody{r: bytes.NewReader(body), err: readErr}
	resp.ContentLength = int64(len(body))
	if readErr == nil {
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	} else {
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	return resp, nil
}

// read reads the body whole, at most MaxReply bytes of it.
func (t *Transport) read(resp *http.Response) ([]byte, error) {
	if t.MaxReply > 0 && resp.ContentLength > t.MaxReply {
		return nil, ErrReplyTooLarge
	}
	if n := resp.ContentLength; n >= 0 {
		// The length is known (a reply is JSON, rarely chunked): one buffer
		// of that size instead of io.ReadAll's growing ones. One byte more
		// sees a body longer than it said.
		b := make([]byte, n+1)
		got, err := io.ReadFull(resp.Body, b)
		switch {
		case int64(got) == n && (err == io.ErrUnexpectedEOF || err == io.EOF):
			return b[:got], nil // all it said it would send
		case int64(got) < n && (err == io.EOF || err == nil):
			return b[:got], io.ErrUnexpectedEOF // cut short
		case err != nil:
			return b[:got], err // cut short: the connection's error
		}
		rest, err := io.ReadAll(resp.Body) // longer than it said
		b = append(b, rest...)
		if t.MaxReply > 0 && int64(len(b)) > t.MaxReply {
			return nil, ErrReplyTooLarge
		}
		return b, err
	}
	if t.MaxReply <= 0 {
		return io.ReadAll(resp.Body)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, t.MaxReply+1))
	if err == nil && int64(len(b)) > t.MaxReply {
		return nil, ErrReplyTooLarge
	}
	return b, err
}

// readBody yields the scrubbed bytes read, then the error that ended the
// read (a connection cut mid-body, the size cap), so the decoder above fails
// the way it would have on the raw body.
type readBody struct {
	r   *bytes.Reader
	err error
}

func (b *readBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		return n, b.err
	}
	return n, err
}

func (b *readBody) Close() error { return nil }
