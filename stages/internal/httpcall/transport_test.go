package httpcall

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTransport: replies are masked before anyone reads them, kept for the
// attempt that asked, and refused over the cap whether or not the server
// announced their length.
func TestTransport(t *testing.T) {
	const key = "sk-transport-secret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := r.URL.Query().Get("say")
		if r.URL.Query().Get("cut") != "" { // says 40 bytes, sends 4 and hangs up
			conn, buf, _ := w.(http.Hijacker).Hijack()
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + body)
			_ = buf.Flush()
			conn.Close()
			return
		}
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length: the cap must hold while reading
		}
		w.Header().Set("X-Echo", r.Header.Get("X-Extra"))
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	tests := []struct {
		name, query string
		want        string
		tooLarge    bool
		cut         bool
	}{
		{"masked", "say=key+" + key + "+ends", "key " + Redacted + " ends", false, false},
		{"at the cap", "say=" + strings.Repeat("a", 64), strings.Repeat("a", 64), false, false},
		{"over the cap", "say=" + strings.Repeat("a", 65), "", true, false},
		{"over the cap, chunked", "chunked=1&say=" + strings.Repeat("a", 65), "", true, false},
		{"cut short of its length", "cut=1&say=abcd", "abcd", false, true},
	}
	for _, tt := range tests {
		tr := &Transport{Headers: http.Header{"X-Extra": {"v"}}, Scrub: NewScrubber(key), MaxReply: 64}
		cp := &Capture{KeepBody: true}
		req, _ := http.NewRequestWithContext(WithCapture(bg, cp), http.MethodGet, srv.URL+"/?"+tt.query, nil)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tt.tooLarge {
			if !errors.Is(err, ErrReplyTooLarge) || !cp.TooLarge {
				t.Errorf("%s: read error %v, TooLarge %v", tt.name, err, cp.TooLarge)
			}
			continue
		}
		if tt.cut {
			// The bytes that came, then the cut, as the raw body would read;
			// nothing kept (only a whole successful body is).
			if !errors.Is(err, io.ErrUnexpectedEOF) || string(b) != tt.want || cp.Body.Len() != 0 {
				t.Errorf("%s: read %q, err %v, kept %q; want %q and io.ErrUnexpectedEOF", tt.name, b, err, cp.Body.String(), tt.want)
			}
			continue
		}
		if err != nil || string(b) != tt.want || cp.Body.String() != tt.want || cp.Status != 200 || cp.Header.Get("X-Echo") != "v" {
			t.Errorf("%s: body %q (kept %q), status %d, echo %q, err %v; want %q", tt.name, b, cp.Body.String(), cp.Status, cp.Header.Get("X-Echo"), err, tt.want)
		}
	}
}
