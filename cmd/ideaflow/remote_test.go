package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// faultCase is one way the fake endpoint misbehaves for a whole run.
type faultCase struct {
	name string
	opts []llmtest.Option
	key  string // the key the run sends ("" the right one)
	hook func(r *llmtest.Request) (llmtest.Fault, bool)
	// serial: one call in flight. A provider that trips takes with it the
	// calls already handed to its client (failed) and the rest are skipped:
	// how many of each depends on timing unless calls go one at a time.
	serial bool
	// tripped: the provider trips on its first request, and which node
	// sends it is the scheduler's choice (run to run, local or not): the
	// failed node's address, and so the results digest, may differ; the
	// counts and every message may not.
	tripped bool
	check   func(t *testing.T, s engine.Summary)
}

func faultSuite() []faultCase {
	isJudge := func(r *llmtest.Request) bool {
		return r.Chat != nil && rankInstruction.MatchString(r.Chat.Messages[len(r.Chat.Messages)-1].Content)
	}
	return []faultCase{
		{name: "answers", check: func(t *testing.T, s engine.Summary) {
			if s.Nodes.Failed != 0 || s.LLMCalls != 32 {
				t.Errorf("nodes %+v, %d calls; want none failed, 32 calls", s.Nodes, s.LLMCalls)
			}
		}},
		{name: "wrong key", opts: []llmtest.Option{llmtest.WithAPIKey("sk-the-right-key")}, key: "sk-a-wrong-key-here", serial: true, tripped: true,
			check: func(t *testing.T, s engine.Summary) {
				// As TestWrongKeyStopsAfterOneRequest: 1 failed + 23 unavailable.
				if s.Unavailable["fake"] == "" || s.Nodes.Failed != 1 || s.Skipped["provider unavailable"] != 23 {
					t.Errorf("nodes %+v, skipped %v, unavailable %v", s.Nodes, s.Skipped, s.Unavailable)
				}
			}},
		{name: "quota", serial: true, tripped: true, hook: func(*llmtest.Request) (llmtest.Fault, bool) {
			return llmtest.Fault{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota"}, true
		}, check: func(t *testing.T, s engine.Summary) {
			if !strings.Contains(s.Unavailable["fake"], "quota") || s.Nodes.Failed != 1 || s.Skipped["provider unavailable"] != 23 {
				t.Errorf("unavailable %v", s.Unavailable)
			}
		}},
		{name: "unparseable judge", hook: func(r *llmtest.Request) (llmtest.Fault, bool) {
			if isJudge(r) {
				return llmtest.Fault{Text: "They are all fine."}, true
			}
			return llmtest.Fault{}, false
		}, check: func(t *testing.T, s engine.Summary) {
			if s.Nodes.Failed == 0 || len(s.Failures) == 0 || !strings.Contains(s.Failures[0].Error, "still unusable") || s.Tokens.Input == 0 {
				t.Errorf("nodes %+v, failures %v", s.Nodes, s.Failures)
			}
		}},
		{name: "bad request", hook: func(r *llmtest.Request) (llmtest.Fault, bool) {
			if isJudge(r) {
				return llmtest.Fault{Status: 400, Message: "context too long"}, true
			}
			return llmtest.Fault{}, false
		}, check: func(t *testing.T, s engine.Summary) {
			if s.Nodes.Failed == 0 || len(s.Unavailable) != 0 {
				t.Errorf("nodes %+v, unavailable %v", s.Nodes, s.Unavailable)
			}
		}},
	}
}

// runFault runs the scenario against srv, on a fresh cache, through the
// executor named, and returns the exit code, the summary, and the requests
// srv saw for it. Both executors of a case share srv: its URL is in the
// provider's settings, and so in every key and the results digest.
func runFault(t *testing.T, srv *llmtest.Server, c faultCase, executorKind string) (int, engine.Summary, int) {
	t.Helper()
	key := c.key
	if key == "" {
		key = "sk-the-right-key"
	}
	t.Setenv("FAULT_TEST_KEY", key)
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "FAULT_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	if c.serial {
		main := filepath.Join(exp, "main.hcl")
		b, err := os.ReadFile(main)
		if err != nil || !bytes.Contains(b, []byte("max_concurrency = 4")) {
			t.Fatalf("main.hcl: %v\n%s", err, b)
		}
		if err := os.WriteFile(main, bytes.Replace(b, []byte("max_concurrency = 4"), []byte("max_concurrency = 1"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sumPath := filepath.Join(dir, "s.json")
	before := srv.Count()
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "cache"), "--summary-json", sumPath, "--executor", executorKind)
	if c.key != "" && strings.Contains(stdout+stderr, key) {
		t.Fatal("the key was printed")
	}
	return code, readSummary(t, sumPath), srv.Count() - before
}

// comparable is what two runs of one experiment on one endpoint must agree
// on, whatever executor ran their calls: timings (and the memo counts,
// which follow them) aside, everything.
// sameOutcome checks a fault case run another way (how: "through JSON")
// ended as the local run: the same exit code, requests and summary, and
// the same results digest unless the provider tripped (then which node
// failed first, and so the digest, depends on timing).
func sameOutcome(t *testing.T, c faultCase, how string, codeL, codeX, reqL, reqX int, sumL, sumX engine.Summary) {
	t.Helper()
	if codeL != codeX || reqL != reqX {
		t.Errorf("local: exit %d after %d requests; %s: exit %d after %d", codeL, reqL, how, codeX, reqX)
	}
	if sumL.ResultsDigest == "" || (!c.tripped && sumL.ResultsDigest != sumX.ResultsDigest) {
		t.Errorf("results digest local %s, %s %s", sumL.ResultsDigest, how, sumX.ResultsDigest)
	}
	cl, cx := comparable(sumL), comparable(sumX)
	if c.tripped {
		cl.ResultsDigest, cx.ResultsDigest = "", ""
		for i := range cl.Failures {
			cl.Failures[i].Address = ""
		}
		for i := range cx.Failures {
			cx.Failures[i].Address = ""
		}
	}
	l, x := reflect.ValueOf(cl), reflect.ValueOf(cx)
	for i := 0; i < l.NumField(); i++ {
		if !reflect.DeepEqual(l.Field(i).Interface(), x.Field(i).Interface()) {
			t.Errorf("%s: local %+v, %s %+v", l.Type().Field(i).Name, l.Field(i), how, x.Field(i))
		}
	}
}

func comparable(s engine.Summary) engine.Summary {
	s.WallSeconds, s.Phases = 0, engine.Phases{}
	s.Models, s.Stages, s.Reports = nil, nil, nil
	// Whether a cached node's memo was read or its work rendered depends on
	// whether the plan's early call had landed when the run reached it.
	s.Memo = engine.MemoCounts{}
	return s
}

// The fault suite through the JSON seam: every task goes to a second
// executor as JSON (carrying its provider's settings: that executor has
// none of its own) and every result or failure comes back as JSON. The
// engine must decide exactly as on local errors: same exit code, same
// requests, same summary (failures, their messages, skips, unavailable
// providers, tokens, cost) and the same results digest. The wrong key
// gives 1 failed + 23 "provider unavailable" both ways.
func TestFaultSuiteThroughJSONWire(t *testing.T) {
	for _, c := range faultSuite() {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(append([]llmtest.Option{llmtest.WithResponder(responder)}, c.opts...)...)
			t.Cleanup(srv.Close)
			if c.hook != nil {
				srv.SetHook(c.hook)
			}
			codeL, sumL, reqL := runFault(t, srv, c, "local")
			codeW, sumW, reqW := runFault(t, srv, c, "loopback")
			c.check(t, sumL)
			sameOutcome(t, c, "through JSON", codeL, codeW, reqL, reqW, sumL, sumW)
		})
	}
}
