package batch

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestPipelineMatchesSync: a three-stage pipeline (each stage's prompts
// made from the answers of the one before) through batches, one batch
// round per stage, gives Responses equal to the synchronous run's, field
// for field (usage with cached tokens included), with as many distinct
// requests, none sent twice.
func TestPipelineMatchesSync(t *testing.T) {
	cached := &openai.Usage{PromptTokens: 50, CompletionTokens: 6, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 32}}
	f := newFixture(t, llmtest.WithBatchPlan(func(n int, ids []string) llmtest.BatchPlan {
		return llmtest.BatchPlan{Lines: map[string]llmtest.LineScript{ids[0]: {Fault: llmtest.Fault{Usage: cached}}}}
	}))
	stage := func(prev map[string]*llm.Response, depth int) []Item {
		var out []Item
		for i := 0; i < 4; i++ {
			prompt := fmt.Sprintf("stage %d idea %d", depth, i)
			if prev != nil {
				prompt = "refine: " + prev[fmt.Sprintf("s%d-%d", depth-1, i)].Text
			}
			out = append(out, Item{Key: fmt.Sprintf("s%d-%d", depth, i), Request: llm.Request{Model: "m",
				Messages: []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: prompt}}}})
		}
		return out
	}

	// Synchronous: the same fake's chat route, the first call of each
	// stage reporting the cached prefix as the batch's first line does.
	sc := f.llmClient(nil)
	syncOut := map[string]*llm.Response{}
	var prev map[string]*llm.Response
	for depth := 0; depth < 3; depth++ {
		cur := map[string]*llm.Response{}
		for i, it := range stage(prev, depth) {
			if i == 0 {
				f.srv.Chat.Enqueue(llmtest.Fault{Usage: cached})
			}
			r, err := sc.Complete(bg, it.Request)
			if err != nil {
				t.Fatal(err)
			}
			cur[it.Key], syncOut[it.Key] = r, r
		}
		prev = cur
	}

	c, done := f.process(nil)
	defer done()
	batchOut := map[string]*llm.Response{}
	prev = nil
	for depth := 0; depth < 3; depth++ {
		rejected, err := c.Submit(bg, stage(prev, depth))
		if err != nil || len(rejected) > 0 {
			t.Fatal(err, rejected)
		}
		cur := map[string]*llm.Response{}
		if err := c.Wait(bg, func(r Result) error {
			if r.Failure != nil {
				return r.Failure
			}
			cur[r.Key], batchOut[r.Key] = r.Response, r.Response
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		prev = cur
	}
	if len(batchOut) != 12 || !reflect.DeepEqual(batchOut, syncOut) {
		for k := range syncOut {
			if !reflect.DeepEqual(batchOut[k], syncOut[k]) {
				t.Errorf("%s: batch %+v\n     sync %+v", k, batchOut[k], syncOut[k])
			}
		}
		t.Fatal("batch answers differ from sync")
	}
	if syncOut["s0-0"].Usage.CachedTokens != 32 {
		t.Fatalf("cached tokens not reported: %+v", syncOut["s0-0"].Usage)
	}
	if got := f.srv.Counts(); got.Creates != 3 || got.Uploads != 3 {
		t.Fatalf("counts %+v, want one batch per stage", got)
	}
	if n := f.srv.Chat.Count(); n != 12 {
		t.Fatalf("sync run made %d requests", n)
	}
	for k, n := range f.srv.Submitted() {
		if n != 1 {
			t.Fatalf("%s submitted %d times", k, n)
		}
	}
	if len(f.srv.Submitted()) != 12 {
		t.Fatalf("submitted %d distinct requests, want 12", len(f.srv.Submitted()))
	}
}

// TestInputLines: the input file holds, per line, the body Complete sends
// (go-openai's own encoding), custom_id the node key, method and url as
// the API wants.
func TestInputLines(t *testing.T) {
	f := newFixture(t)
	c, done := f.process(nil)
	defer done()
	temp := 0.0
	its := []Item{{Key: "k1", Request: llm.Request{Model: "m", Temperature: &temp, MaxTokens: 64,
		Messages: []llm.Message{{Role: "user", Content: "hi"}}}}}
	if _, err := c.Submit(bg, its); err != nil {
		t.Fatal(err)
	}
	in := f.srv.FileContent(f.srv.Batches()[0].InputFileID)
	body, err := c.api.ChatRequest(its[0].Request)
	if err != nil {
		t.Fatal(err)
	}
	want := string(openai.BatchChatCompletionRequest{CustomID: "k1", Method: "POST", URL: openai.BatchEndpointChatCompletions, Body: body}.MarshalBatchLineItem()) + "\n"
	if string(in) != want {
		t.Fatalf("input file\n%s\nwant\n%s", in, want)
	}
	if md := f.srv.Batches()[0].Metadata; md[MetadataKey] != "sub_001" {
		t.Fatalf("metadata %v", md)
	}
}

// TestSplitting: files hold one model each and stay within the request
// and byte limits; a request over the byte limit alone is refused before
// any upload, for the caller to send synchronously.
func TestSplitting(t *testing.T) {
	line := func(key, model string, n int) int64 { // as Submit encodes it
		b, _ := json.Marshal(openai.BatchChatCompletionRequest{CustomID: key, Method: "POST", URL: openai.BatchEndpointChatCompletions,
			Body: openai.ChatCompletionRequest{Model: model, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: fmt.Sprintf("idea %s %d", key[:1], n)}}}})
		return int64(len(b) + 1)
	}
	one := line("a00", "m", 0)
	tests := []struct {
		name      string
		maxReq    int
		maxBytes  int64
		items     []Item
		wantFiles [][]string
		rejected  []string
	}{
		{name: "by count and model", maxReq: 3, items: append(items("m", 7, "a"), items("n", 2, "b")...),
			wantFiles: [][]string{{"a00", "a01", "a02"}, {"a03", "a04", "a05"}, {"a06"}, {"b00", "b01"}}},
		{name: "by bytes", maxBytes: 2*one + 1, items: items("m", 5, "a"),
			wantFiles: [][]string{{"a00", "a01"}, {"a02", "a03"}, {"a04"}}},
		{name: "one too large", maxBytes: one + 1, items: append(items("m", 2, "a"),
			Item{Key: "big", Request: llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: strings.Repeat("x", int(one))}}}}),
			wantFiles: [][]string{{"a00"}, {"a01"}}, rejected: []string{"big"}},
		{name: "repeated and carried keys go once", items: append(items("m", 2, "a"), items("m", 2, "a")...),
			wantFiles: [][]string{{"a00", "a01"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, llmtest.WithBatchLimits(tt.maxReq, tt.maxBytes))
			f.opts.MaxRequests, f.opts.MaxFileBytes = tt.maxReq, tt.maxBytes
			c, done := f.process(nil)
			defer done()
			rej, err := c.Submit(bg, tt.items)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Submit(bg, tt.items); err != nil { // handed again while in flight: nothing new
				t.Fatal(err)
			}
			var gotRej []string
			for _, r := range rej {
				if r.Failure.Kind != FailTooLarge || r.Failure.Retryable() {
					t.Fatalf("rejected %+v", r.Failure)
				}
				gotRej = append(gotRej, r.Key)
			}
			if !reflect.DeepEqual(gotRej, tt.rejected) {
				t.Fatalf("rejected %v, want %v", gotRej, tt.rejected)
			}
			var files [][]string
			for _, b := range f.srv.Batches() {
				files = append(files, b.CustomIDs)
			}
			if !reflect.DeepEqual(files, tt.wantFiles) {
				t.Fatalf("files %v, want %v", files, tt.wantFiles)
			}
			col := newCollector()
			if err := c.Wait(bg, col.sink); err != nil {
				t.Fatal(err)
			}
			for k, r := range col.got {
				if r.Failure != nil {
					t.Fatalf("%s: %v (the fake's validation refused a file the client made)", k, r.Failure)
				}
			}
		})
	}
}

// TestPollBackoff: the first poll is immediate, then the waits double from
// PollFirst to PollMax, on the injected clock (no real sleep).
func TestPollBackoff(t *testing.T) {
	f := newFixture(t, llmtest.WithBatchPlan(func(int, []string) llmtest.BatchPlan { return llmtest.BatchPlan{Hold: 2} }))
	f.opts.PollMax = time.Minute
	c, done := f.process(nil)
	defer done()
	if _, err := c.Submit(bg, items("m", 2, "a")); err != nil {
		t.Fatal(err)
	}
	col := newCollector()
	if err := c.Wait(bg, col.sink); err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := []time.Duration{15 * s, 30 * s, 60 * s, 60 * s, 60 * s}
	if got := f.clock.Sleeps(); !reflect.DeepEqual(got, want) {
		t.Fatalf("sleeps %v, want %v", got, want)
	}
	if got := f.srv.Counts().Retrieves; got != 6 {
		t.Fatalf("%d polls, want 6", got)
	}
	if len(c.Open()) != 0 || len(col.got) != 2 {
		t.Fatalf("open %v, results %d", c.Open(), len(col.got))
	}
}

// TestFailedLines: every way a line can come back without an answer is
// reported for its key, with whether a retry may answer.
func TestFailedLines(t *testing.T) {
	type want struct {
		kind      FailureKind
		retryable bool
	}
	ok := want{}
	tests := []struct {
		name   string
		plan   llmtest.BatchPlan
		cancel bool
		want   map[string]want
	}{
		{name: "partial completion", plan: llmtest.BatchPlan{Lines: map[string]llmtest.LineScript{
			"a01": {Fault: llmtest.Fault{Status: 500}}, "a02": {Fault: llmtest.Fault{Status: 400, Message: "bad"}},
			"a03": {Error: llmtest.BatchLineTimeout}, "a04": {Drop: true}, "a05": {Fault: llmtest.Fault{Status: 429}}}},
			want: map[string]want{"a00": ok, "a01": {FailStatus, true}, "a02": {FailStatus, false}, "a03": {FailLine, true},
				"a04": {FailMissing, true}, "a05": {FailStatus, true}}},
		{name: "expired", plan: llmtest.BatchPlan{End: llmtest.BatchExpired, Done: 2},
			want: map[string]want{"a00": ok, "a01": ok, "a02": {FailExpired, true}, "a03": {FailExpired, true}, "a04": {FailExpired, true}, "a05": {FailExpired, true}}},
		{name: "expired, lines lost", plan: llmtest.BatchPlan{End: llmtest.BatchExpired, Done: 5, Lines: map[string]llmtest.LineScript{"a05": {Drop: true}}},
			want: map[string]want{"a00": ok, "a01": ok, "a02": ok, "a03": ok, "a04": ok, "a05": {FailExpired, true}}},
		{name: "failed", plan: llmtest.BatchPlan{End: llmtest.BatchFailed},
			want: map[string]want{"a00": {FailBatch, false}, "a01": {FailBatch, false}, "a02": {FailBatch, false}, "a03": {FailBatch, false}, "a04": {FailBatch, false}, "a05": {FailBatch, false}}},
		{name: "cancelled", plan: llmtest.BatchPlan{Done: 1, Hold: 3}, cancel: true,
			want: map[string]want{"a00": ok, "a01": {FailCancelled, false}, "a02": {FailCancelled, false}, "a03": {FailCancelled, false}, "a04": {FailCancelled, false}, "a05": {FailCancelled, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, llmtest.WithBatchPlan(func(int, []string) llmtest.BatchPlan { return tt.plan }))
			c, done := f.process(nil)
			defer done()
			if _, err := c.Submit(bg, items("m", 6, "a")); err != nil {
				t.Fatal(err)
			}
			if tt.cancel {
				if err := c.Cancel(bg, c.Open()[0].ID); err != nil {
					t.Fatal(err)
				}
			}
			col := newCollector()
			if err := c.Wait(bg, col.sink); err != nil {
				t.Fatal(err)
			}
			got := map[string]want{}
			for k, r := range col.got {
				if r.Failure == nil {
					if r.Response == nil || r.Response.Text == "" || r.BatchID == "" {
						t.Fatalf("%s: empty result %+v", k, r)
					}
					got[k] = ok
					continue
				}
				got[k] = want{r.Failure.Kind, r.Failure.Retryable()}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestSecretsMasked: a key the endpoint repeats in an answer is masked in
// the Response, and neither key nor answer text reaches the journal.
func TestSecretsMasked(t *testing.T) {
	f := newFixture(t, llmtest.WithBatchPlan(func(int, []string) llmtest.BatchPlan {
		return llmtest.BatchPlan{Lines: map[string]llmtest.LineScript{"a00": {Fault: llmtest.Fault{Text: "you sent Bearer " + testKey}},
			"a01": {Fault: llmtest.Fault{Status: 401, Message: "Incorrect API key provided: " + testKey}}}}
	}))
	c, done := f.process(nil)
	defer done()
	if _, err := c.Submit(bg, items("m", 2, "a")); err != nil {
		t.Fatal(err)
	}
	col := newCollector()
	if err := c.Wait(bg, col.sink); err != nil {
		t.Fatal(err)
	}
	if txt := col.got["a00"].Response.Text; strings.Contains(txt, testKey) || !strings.Contains(txt, "you sent") {
		t.Fatalf("answer %q", txt)
	}
	if msg := col.got["a01"].Failure.Error(); strings.Contains(msg, testKey) {
		t.Fatalf("failure %q", msg)
	}
	j, _ := os.ReadFile(f.journal)
	if strings.Contains(string(j), testKey) || strings.Contains(string(j), "you sent") {
		t.Fatalf("journal holds a secret or an answer:\n%s", j)
	}
}

// TestNeedsBatchKind: a provider kind without a batch interface is refused
// by name.
func TestNeedsBatchKind(t *testing.T) {
	mock, err := llm.New(llm.Provider{Kind: "mock"})
	if err != nil {
		t.Fatal(err)
	}
	fj, err := OpenFile(t.TempDir() + "/j")
	if err != nil {
		t.Fatal(err)
	}
	defer fj.Close()
	if _, err := New(mock, fj, Options{}); err == nil || !strings.Contains(err.Error(), `kind "openai"`) {
		t.Fatalf("err %v", err)
	}
}

// TestPollErrors: polls that fail transiently are waited out with the same
// back-off, up to MaxPollErrors in a row; one more ends Wait with the
// error, and the batch, still open in the journal, is collected later.
func TestPollErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		status  int
		fails   int
		wantErr bool
	}{
		{"two 503s", 503, 2, false},
		{"five 502s: the limit", 502, 5, false},
		{"six 500s: one too many", 500, 6, true},
		{"a 404 is not transient", 404, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			c1, end1 := f.process(nil)
			if _, err := c1.Submit(bg, items("m", 2, "a")); err != nil {
				t.Fatal(err)
			}
			end1()
			fj, err := OpenFile(f.journal)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(f.llmClient(&flaky{base: f.srv.HTTPClient().Transport, path: "/batches/", status: tt.status, n: tt.fails}), fj, f.opts)
			if err != nil {
				t.Fatal(err)
			}
			col := newCollector()
			err = c.Wait(bg, col.sink)
			fj.Close()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Wait: %v", err)
			}
			if tt.wantErr {
				if len(col.got) != 0 {
					t.Fatalf("results %v", col.got)
				}
				c2, end2 := f.process(nil)
				defer end2()
				if err := c2.Wait(bg, col.sink); err != nil {
					t.Fatal(err)
				}
			}
			if len(col.got) != 2 || f.srv.Counts().Creates != 1 {
				t.Fatalf("results %d, counts %+v", len(col.got), f.srv.Counts())
			}
		})
	}
}
