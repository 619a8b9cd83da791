package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const testKey = "sk-batch-SECRET-5678"

var bg = context.Background()

// errKilled is what a killed process's calls see: nothing more reaches the
// server or the journal.
var errKilled = errors.New("process killed")

// killer plays kill -9 at one step: a transport under the provider's own
// (masking, capping) transport, and a journal wrapper, sharing one switch.
// Once dead, no request leaves and no entry is recorded.
type killer struct {
	killSpec
	base http.RoundTripper
	dead atomic.Bool
	seen int
	mu   sync.Mutex
	file string // the journal file, for a torn write
}

// killSpec says where a killer strikes.
type killSpec struct {
	// The request that dies: the nth (0: the first) of this method whose
	// path ends so, before it reaches the server (after=false) or once
	// the server has handled it, its reply lost (after=true).
	method, path string
	after        bool
	nth          int
	// tear picks the journal entry whose write is cut in half instead.
	tear Op
}

func (k *killer) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.dead.Load() {
		return nil, errKilled
	}
	match := false
	if k.method != "" && r.Method == k.method && strings.HasSuffix(r.URL.Path, k.path) {
		k.mu.Lock()
		match = k.seen == k.nth
		k.seen++
		k.mu.Unlock()
	}
	if match && !k.after {
		k.dead.Store(true)
		return nil, errKilled
	}
	resp, err := k.base.RoundTrip(r)
	if match {
		if resp != nil {
			resp.Body.Close()
		}
		k.dead.Store(true)
		return nil, errKilled
	}
	return resp, err
}

type killJournal struct {
	Journal
	k *killer
}

func (j killJournal) Record(e Entry) error {
	if j.k.dead.Load() {
		return errKilled
	}
	if j.k.tear != "" && e.Op == j.k.tear {
		line, _ := encodeLine(e)
		appendRaw(j.k.file, line[:len(line)/2])
		j.k.dead.Store(true)
		return errKilled
	}
	return j.Journal.Record(e)
}

// fixture is one fake provider and a journal file that outlive the
// "processes" (Clients) a test starts on them.
type fixture struct {
	t       testing.TB
	srv     *llmtest.BatchServer
	journal string
	clock   *llmtest.FakeClock
	opts    Options
}

func newFixture(t testing.TB, opts ...llmtest.BatchOption) *fixture {
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithAPIKey(testKey)), opts...)
	t.Cleanup(srv.Close)
	n := 0
	clock := llmtest.NewFakeClock(llmtest.Epoch)
	return &fixture{t: t, srv: srv, journal: filepath.Join(t.TempDir(), "batches.journal"), clock: clock,
		opts: Options{Clock: clock, NewID: func() string { n++; return fmt.Sprintf("sub_%03d", n) }}}
}

func (f *fixture) provider() llm.Provider {
	return llm.Provider{Name: "fake", Kind: "openai", BaseURL: f.srv.URL, APIKeyEnv: "TEST_KEY", MaxRetries: -1, RepairAttempts: -1}
}

func (f *fixture) llmClient(rt http.RoundTripper) llm.Client {
	f.t.Helper()
	if rt == nil {
		rt = f.srv.HTTPClient().Transport
	}
	c, err := llm.New(f.provider(), llm.WithHTTPClient(&http.Client{Transport: rt}), llm.WithClock(f.clock),
		llm.WithEnv(func(name string) (string, bool) { return testKey, name == "TEST_KEY" }))
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// process starts a Client on the journal, as one run of ideaflow would;
// k, if set, kills it at its step. The returned func ends the process
// (closing the journal, as the kernel does for a killed one).
func (f *fixture) process(k *killer) (*Client, func()) {
	f.t.Helper()
	fj, err := OpenFile(f.journal)
	if err != nil {
		f.t.Fatal(err)
	}
	var j Journal = fj
	var rt http.RoundTripper
	if k != nil {
		k.base, k.file = f.srv.HTTPClient().Transport, f.journal
		rt = k
		j = killJournal{Journal: fj, k: k}
	}
	c, err := New(f.llmClient(rt), j, f.opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return c, func() { fj.Close() }
}

func items(model string, n int, prefix string) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{Key: fmt.Sprintf("%s%02d", prefix, i), Request: llm.Request{Model: model,
			Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf("idea %s %d", prefix, i)}}}}
	}
	return out
}

// collector is a sink: every Result by key, and how often each came.
type collector struct {
	got   map[string]Result
	times map[string]int
}

func newCollector() *collector { return &collector{got: map[string]Result{}, times: map[string]int{}} }

func (c *collector) sink(r Result) error {
	c.got[r.Key] = r
	c.times[r.Key]++
	return nil
}

// appendRaw appends bytes to a file without a checksum or fsync: tests
// use it to leave the torn write a crash mid-Record leaves.
func appendRaw(path string, b []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(b)
}

// flaky answers the first n requests whose path contains path with status,
// without passing them on.
type flaky struct {
	base   http.RoundTripper
	path   string
	status int
	n      int
	mu     sync.Mutex
}

func (f *flaky) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	hit := f.n > 0 && strings.Contains(r.URL.Path, f.path)
	if hit {
		f.n--
	}
	f.mu.Unlock()
	if !hit {
		return f.base.RoundTrip(r)
	}
	body := `{"error":{"message":"upstream hiccup","type":"server_error","code":null}}`
	return &http.Response{StatusCode: f.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
}

func nowNs() int64 { return time.Now().UnixNano() }
