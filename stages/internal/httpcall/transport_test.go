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
	}{
		{"masked", "say=key+" + key + "+ends", "key " + Redacted + " ends", false},
		{"at the cap", "say=" + strings.Repeat("a", 64), strings.Repeat("a", 64), false},
		{"over the cap", "say=" + strings.Repeat("a", 65), "", true},
		{"over the cap, chunked", "chunked=1&say=" + strings.Repeat("a", 65), "", true},
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
		if err != nil || string(b) != tt.want || cp.Body.String() != tt.want || cp.Status != 200 || cp.Header.Get("X-Echo") != "v" {
			t.Errorf("%s: body %q (kept %q), status %d, echo %q, err %v; want %q", tt.name, b, cp.Body.String(), cp.Status, cp.Header.Get("X-Echo"), err, tt.want)
		}
	}
}
