package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/engine/executor/jetstream"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// natsFleet is an in-process NATS server with JetStream (in a temp dir)
// and n workers, each on its own connection with the executor `ideaflow
// worker` builds, running until the test ends.
type natsFleet struct {
	url     string
	dataDir string           // the server's JetStream storage
	queue   *jetstream.Queue // a connection of the test's own, to read the stream
	workers []*jetstream.Worker
	open    func() *jetstream.Queue
	opts    []llm.Option // the workers' client options
}

func startFleet(t *testing.T, n int, opts ...llm.Option) *natsFleet {
	t.Helper()
	dataDir := t.TempDir()
	s, err := jetstream.StartServer("127.0.0.1:0", dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	f := &natsFleet{url: s.URL(), dataDir: dataDir, opts: opts}
	open := func() *jetstream.Queue {
		nc, err := connectNATS(s.URL(), "test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		q, err := jetstream.Open(context.Background(), nc, jetstream.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	f.open = open
	f.queue = open()
	for range n {
		f.addWorker(t)
	}
	return f
}

// addWorker starts one more in-process worker, on its own connection.
func (f *natsFleet) addWorker(t *testing.T) *jetstream.Worker {
	q := f.open()
	w := jetstream.NewWorker(q, workerExecutor(q, zerolog.Nop(), nil, f.opts...), 8, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	f.workers = append(f.workers, w)
	return w
}

// pending is the stream's tasks not acked yet.
func (f *natsFleet) pending(t *testing.T) uint64 {
	t.Helper()
	info, err := f.queue.Stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// published is how many tasks the stream has ever taken.
func (f *natsFleet) published(t *testing.T) uint64 {
	t.Helper()
	info, err := f.queue.Stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// noSecret fails the test if any file the server stored holds secret:
// tasks carry the names of the variables holding keys, never their
// values, and failure messages are scrubbed before they are stored.
func (f *natsFleet) noSecret(t *testing.T, secret string) {
	t.Helper()
	files, results := 0, 0
	err := filepath.WalkDir(f.dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		// Every result stored says its usage: the scan reads what was stored.
		results += bytes.Count(b, []byte(`"usage":`))
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
	if err != nil || results == 0 {
		t.Fatalf("reading the server's storage: %v (%d files, %d results seen)", err, files, results)
	}
}

func (f *natsFleet) ran() int64 {
	var n int64
	for _, w := range f.workers {
		n += w.Stats().Ran
	}
	return n
}

// The quickstart pipeline (scenario: the quickstart's data and prompt,
// two generators and a judge on a fake OpenAI-compatible endpoint) run
// with --executor nats://... on two in-process workers: the same exit
// code, results digest and summary as a local run, one endpoint call per
// call node (as many as the local run made, and as many as the stream
// took); a warm run after it publishes nothing and calls nothing.
func TestRunOnNATSWorkers(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("FAULT_TEST_KEY", "sk-the-right-key")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "FAULT_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	run := func(cacheDir, executorKind, summary string) (int, string) {
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, cacheDir), "--summary-json", filepath.Join(dir, summary), "--executor", executorKind)
		if code != 0 {
			t.Fatalf("run --executor %s: exit %d\n%s\n%s", executorKind, code, stdout, stderr)
		}
		return code, stdout
	}
	run("local-cache", "local", "local.json")
	localCalls := srv.Count()
	sumL := readSummary(t, filepath.Join(dir, "local.json"))

	f := startFleet(t, 2)
	_, stdout := run("nats-cache", f.url, "nats.json")
	sumN := readSummary(t, filepath.Join(dir, "nats.json"))
	natsCalls := srv.Count() - localCalls
	if sumN.LLMCalls != 32 || natsCalls != sumN.LLMCalls || natsCalls != localCalls {
		t.Errorf("through NATS %d endpoint calls for %d call nodes; the local run made %d", natsCalls, sumN.LLMCalls, localCalls)
	}
	if got := f.published(t); got != uint64(natsCalls) || f.ran() != int64(natsCalls) {
		t.Errorf("the stream took %d task(s), the workers ran %d; want %d", got, f.ran(), natsCalls)
	}
	if want := fmt.Sprintf("%d task(s) published (0 dropped as duplicates), 0 answered from its results store", natsCalls); !strings.Contains(stdout, want) {
		t.Errorf("the run does not say %q:\n%s", want, stdout)
	}
	if sumL.ResultsDigest == "" || sumL.ResultsDigest != sumN.ResultsDigest {
		t.Errorf("results digest local %s, through NATS %s", sumL.ResultsDigest, sumN.ResultsDigest)
	}
	cl, cn := comparable(sumL), comparable(sumN)
	l, n := reflect.ValueOf(cl), reflect.ValueOf(cn)
	for i := 0; i < l.NumField(); i++ {
		if !reflect.DeepEqual(l.Field(i).Interface(), n.Field(i).Interface()) {
			t.Errorf("%s: local %+v, through NATS %+v", l.Type().Field(i).Name, l.Field(i), n.Field(i))
		}
	}

	before := f.published(t)
	_, stdout = run("nats-cache", f.url, "warm.json")
	if got := f.published(t); got != before || srv.Count() != localCalls+natsCalls {
		t.Errorf("the warm run published %d task(s) and made %d call(s)", got-before, srv.Count()-localCalls-natsCalls)
	}
	if !strings.Contains(stdout, "0 task(s) published") {
		t.Errorf("the warm run does not say it published nothing:\n%s", stdout)
	}

	// A coordinator on a machine with an empty cache (or one restarted
	// after its cache was lost) is answered by the results store: no
	// publish, no call, the same results.
	_, stdout = run("fresh-cache", f.url, "fresh.json")
	sumF := readSummary(t, filepath.Join(dir, "fresh.json"))
	if got := f.published(t); got != before || srv.Count() != localCalls+natsCalls {
		t.Errorf("the run on a fresh cache published %d task(s) and made %d call(s)", got-before, srv.Count()-localCalls-natsCalls)
	}
	if want := fmt.Sprintf("0 task(s) published (0 dropped as duplicates), %d answered from its results store", natsCalls); !strings.Contains(stdout, want) {
		t.Errorf("the run on a fresh cache does not say %q:\n%s", want, stdout)
	}
	if sumF.ResultsDigest != sumL.ResultsDigest {
		t.Errorf("results digest on a fresh cache %s, local %s", sumF.ResultsDigest, sumL.ResultsDigest)
	}
	f.noSecret(t, "sk-the-right-key")
}

// The fault suite through NATS workers: a refused key (401), an exhausted
// quota, an unparseable judge, a 400: each ends as the local run does
// (same exit code, requests and summary, failures and their messages
// included), as TestFaultSuiteThroughJSONWire checks of the in-process
// wire. Each case has a server and one worker of its own: its one client
// per provider serializes the calls of a max_concurrency 1 provider as a
// local run's does, so the call in flight when the provider trips fails
// without a request, as locally. (With two workers, an early call and a
// dispatched one can be on two clients at once: see
// TestTripSharedAcrossWorkers.)
func TestFaultSuiteThroughNATS(t *testing.T) {
	for _, c := range faultSuite() {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(append([]llmtest.Option{llmtest.WithResponder(responder)}, c.opts...)...)
			t.Cleanup(srv.Close)
			if c.hook != nil {
				srv.SetHook(c.hook)
			}
			f := startFleet(t, 1)
			codeL, sumL, reqL := runFault(t, srv, c, "local")
			codeN, sumN, reqN := runFault(t, srv, c, f.url)
			c.check(t, sumL)
			f.noSecret(t, "sk-the-right-key")
			if c.key != "" {
				f.noSecret(t, c.key) // the fake's 401 repeats the key it was sent
			}
			sameOutcome(t, c, "through NATS", codeL, codeN, reqL, reqN, sumL, sumN)
		})
	}
}

// A worker given --allow-endpoint refuses a task naming another endpoint
// (whoever can publish could otherwise have it send its key anywhere)
// without a request, and runs one naming an allowed endpoint.
func TestWorkerAllowEndpoint(t *testing.T) {
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	t.Setenv("ALLOW_TEST_KEY", "sk-test")
	p := llm.NewProvider("fake", "openai")
	p.BaseURL, p.APIKeyEnv = srv.URL, "ALLOW_TEST_KEY"
	tk := &executor.Task{Key: "k", Address: "x", Provider: "fake", Settings: &p,
		Chat: &llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}, Format: format.Spec{Kind: format.Text}}}
	f := startFleet(t, 0) // the clients' shared breaker count is in its bucket
	for _, c := range []struct {
		allowed []string
		ok      bool
	}{
		{[]string{"https://api.example.invalid/"}, false},
		{[]string{"https://api.example.invalid/", srv.URL}, true},
		{nil, true},
	} {
		before := srv.Count()
		ex := workerExecutor(f.queue, zerolog.Nop(), c.allowed)()
		_, err := ex.Execute(context.Background(), tk)
		if (err == nil) != c.ok || (srv.Count()-before == 1) != c.ok {
			t.Errorf("allowed %v: error %v after %d request(s), want ok %v", c.allowed, err, srv.Count()-before, c.ok)
		}
	}
}

// With $IDEAFLOW_NATS_TOKEN set, the server refuses a client without the
// token, and workers and runs (connectNATS) present it.
func TestNATSToken(t *testing.T) {
	s, err := jetstream.StartServer("127.0.0.1:0", t.TempDir(), "s3cret-token")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	t.Setenv(natsTokenEnv, "")
	if nc, err := connectNATS(s.URL(), "test"); err == nil {
		nc.Close()
		t.Fatal("connected without the token")
	}
	t.Setenv(natsTokenEnv, "s3cret-token")
	nc, err := connectNATS(s.URL(), "test")
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}

// Samples as n choices through the queue: a prompt's 5 samples go as one
// task (its key is sample 0's), and the choice that does not parse goes
// again alone under sample 0's key. The task id tells the two apart (with
// the node key alone the lone re-ask would be dropped as a duplicate of
// the batch, or answered with its stored result), so the run asks what a
// local run asks: 8 requests, 24 calls, nothing failed, the same results.
func TestChoicesThroughNATS(t *testing.T) {
	srv, dir, exp := refusedChoiceScenario(t)
	f := startFleet(t, 2)
	var digests []string
	for _, executorKind := range []string{"local", f.url} {
		before := srv.Count()
		sumPath := filepath.Join(dir, "s.json")
		if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "cache-"+fmt.Sprint(before)), "--summary-json", sumPath, "--executor", executorKind); code != 0 {
			t.Fatalf("run --executor %s: exit %d\n%s\n%s", executorKind, code, stdout, stderr)
		}
		s := readSummary(t, sumPath)
		if n := srv.Count() - before; n != 8 || s.LLMCalls != 4*5+4 || s.Requests != 8 || s.Nodes.Failed != 0 {
			t.Errorf("--executor %s: %d requests, llm_calls %d, requests %d, nodes %+v; want 8 requests and 24 calls", executorKind, n, s.LLMCalls, s.Requests, s.Nodes)
		}
		digests = append(digests, s.ResultsDigest)
	}
	if digests[0] != digests[1] {
		t.Errorf("results digest local %s, through NATS %s", digests[0], digests[1])
	}
	if got := f.published(t); got != 8 {
		t.Errorf("the stream took %d tasks, want 8", got)
	}
}

// Service calls (embeddings, TEI token embeddings) through the queue: the
// same requests and results as a local run, their bodies carried as a
// Result's raw JSON, and no key in the server's storage.
func TestServiceCallsThroughNATS(t *testing.T) {
	emb := llmtest.New()
	t.Cleanup(emb.Close)
	tei := llmtest.NewTEI()
	t.Cleanup(tei.Close)
	t.Setenv("SERVICE_API_KEY", "sk-service-test-key")
	dir, exp := writeServiceExperiment(t, emb.URL, tei.URL)
	f := startFleet(t, 2)
	var digests []string
	for i, executorKind := range []string{"local", f.url} {
		sumPath := filepath.Join(dir, "s.json")
		if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, fmt.Sprint("cache", i)), "--summary-json", sumPath, "--executor", executorKind); code != 0 {
			t.Fatalf("run --executor %s: exit %d\n%s\n%s", executorKind, code, stdout, stderr)
		}
		s := readSummary(t, sumPath)
		if n := i + 1; s.ServiceCalls != 6 || s.Nodes.Ran != 6 || emb.Count() != 3*n || tei.Count("/embed_all") != 3*n {
			t.Errorf("--executor %s: %d service calls, nodes %+v; endpoints saw %d embeddings and %d embed_all requests in all", executorKind, s.ServiceCalls, s.Nodes, emb.Count(), tei.Count("/embed_all"))
		}
		digests = append(digests, s.ResultsDigest)
	}
	if digests[0] == "" || digests[0] != digests[1] {
		t.Errorf("results digest local %s, through NATS %s", digests[0], digests[1])
	}
	if got := f.published(t); got != 6 {
		t.Errorf("the stream took %d tasks, want 6", got)
	}
	f.noSecret(t, "sk-service-test-key")
}

// The coordinator needs no key: its tasks carry the name of the variable
// and the workers read it. Without the key in its environment a local run
// is refused before any call (exit 2, "Missing API key"); the same run on
// workers that have it succeeds, every request carrying the workers' key.
func TestCoordinatorNeedsNoKey(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("FAULT_TEST_KEY", "") // not set, as far as the coordinator can tell
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "FAULT_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	workerEnv := func(name string) (string, bool) {
		if name == "FAULT_TEST_KEY" {
			return "sk-the-workers-key", true
		}
		return os.LookupEnv(name)
	}
	f := startFleet(t, 2, llm.WithEnv(workerEnv))
	code, _, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "local"))
	if code != exitBadInput || !strings.Contains(stderr, "FAULT_TEST_KEY") || srv.Count() != 0 {
		t.Fatalf("local run without the key: exit %d after %d requests\n%s", code, srv.Count(), stderr)
	}
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "nats"), "--executor", f.url)
	if code != 0 {
		t.Fatalf("run on the workers: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := sentWithKey(srv, "sk-the-workers-key"); n != 32 || srv.Count() != 32 {
		t.Errorf("%d of %d requests with the workers' key, want 32 of 32", n, srv.Count())
	}
}

// A provider that trips (a refused key, an exhausted quota) on a fleet of
// two workers: the run ends as the local one does (same exit code, the
// same provider unavailable, one node failed and the rest skipped for
// it), and the trip is shared (down.go), so any task reaching a worker
// after it fails without a request. Only a task already on the other
// worker's client when the first request failed can make one more: at
// most 1 request beyond the local run's.
func TestTripSharedAcrossWorkers(t *testing.T) {
	for _, c := range faultSuite() {
		if !c.tripped {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(append([]llmtest.Option{llmtest.WithResponder(responder)}, c.opts...)...)
			t.Cleanup(srv.Close)
			if c.hook != nil {
				srv.SetHook(c.hook)
			}
			f := startFleet(t, 2)
			codeL, sumL, reqL := runFault(t, srv, c, "local")
			codeN, sumN, reqN := runFault(t, srv, c, f.url)
			c.check(t, sumL)
			if codeL != codeN || reqN < reqL || reqN > reqL+1 {
				t.Errorf("local: exit %d after %d requests; on two workers: exit %d after %d", codeL, reqL, codeN, reqN)
			}
			if !reflect.DeepEqual(sumL.Unavailable, sumN.Unavailable) {
				t.Errorf("unavailable: local %v, on two workers %v", sumL.Unavailable, sumN.Unavailable)
			}
			nl, nn := sumL.Nodes, sumN.Nodes
			if nn.Failed < 1 || nn.Failed > nl.Failed+1 || nn.Failed+nn.Skipped != nl.Failed+nl.Skipped || nn.Ran != nl.Ran {
				t.Errorf("nodes: local %+v, on two workers %+v", nl, nn)
			}
		})
	}
}
