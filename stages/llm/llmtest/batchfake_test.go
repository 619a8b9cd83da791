package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func batchClient(s *BatchServer) *openai.Client {
	cfg := openai.DefaultConfig("sk-batch")
	cfg.BaseURL = s.URL
	cfg.HTTPClient = s.HTTPClient()
	return openai.NewClientWithConfig(cfg)
}

func chatLine(id, model, prompt string) openai.BatchChatCompletionRequest {
	return openai.BatchChatCompletionRequest{CustomID: id, Method: "POST", URL: openai.BatchEndpointChatCompletions,
		Body: openai.ChatCompletionRequest{Model: model, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: prompt}}}}
}

func readLines(t *testing.T, c *openai.Client, id string) []outputLine {
	t.Helper()
	if id == "" {
		return nil
	}
	raw, err := c.GetFileContent(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	b, _ := io.ReadAll(raw)
	var out []outputLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l outputLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// TestBatchFakeLifecycle drives the fake through go-openai's own batch and
// file calls: the statuses each retrieval reports, where each line ends up,
// and what was submitted and run.
func TestBatchFakeLifecycle(t *testing.T) {
	tests := []struct {
		name       string
		lines      []openai.BatchLineItem
		plan       BatchPlan
		cancelAt   int // cancel after this many retrievals (0: never)
		wantStates []string
		wantOK     []string // custom_ids in the output file
		wantErr    map[string]string
		wantRan    int
	}{
		{name: "completed", lines: []openai.BatchLineItem{chatLine("a", "m", "1"), chatLine("b", "m", "2")},
			wantStates: []string{BatchInProgress, BatchFinalizing, BatchCompleted}, wantOK: []string{"a", "b"}, wantRan: 2},
		{name: "held twice per status", lines: []openai.BatchLineItem{chatLine("a", "m", "1")}, plan: BatchPlan{Hold: 2},
			wantStates: []string{BatchValidating, BatchInProgress, BatchInProgress, BatchFinalizing, BatchFinalizing, BatchCompleted},
			wantOK:     []string{"a"}, wantRan: 1},
		{name: "partial: a status and an error object", lines: []openai.BatchLineItem{chatLine("a", "m", "1"), chatLine("b", "m", "2"), chatLine("c", "m", "3"), chatLine("d", "m", "4")},
			plan:       BatchPlan{Lines: map[string]LineScript{"b": {Fault: Fault{Status: 500}}, "c": {Error: BatchLineTimeout}, "d": {Drop: true}}},
			wantStates: []string{BatchInProgress, BatchFinalizing, BatchCompleted}, wantOK: []string{"a"},
			wantErr: map[string]string{"b": "status 500", "c": BatchLineTimeout}, wantRan: 3},
		{name: "expired after one line", lines: []openai.BatchLineItem{chatLine("a", "m", "1"), chatLine("b", "m", "2")},
			plan: BatchPlan{End: BatchExpired, Done: 1}, wantStates: []string{BatchInProgress, BatchExpired},
			wantOK: []string{"a"}, wantErr: map[string]string{"b": LineBatchExpired}, wantRan: 1},
		{name: "scripted failure", lines: []openai.BatchLineItem{chatLine("a", "m", "1")}, plan: BatchPlan{End: BatchFailed},
			wantStates: []string{BatchFailed}},
		{name: "two models fail validation", lines: []openai.BatchLineItem{chatLine("a", "m", "1"), chatLine("b", "n", "2")},
			wantStates: []string{BatchFailed}},
		{name: "duplicate custom_id fails validation", lines: []openai.BatchLineItem{chatLine("a", "m", "1"), chatLine("a", "m", "2")},
			wantStates: []string{BatchFailed}},
		{name: "over the request limit", lines: []openai.BatchLineItem{chatLine("a", "m", "1"), chatLine("b", "m", "2"), chatLine("c", "m", "3")},
			wantStates: []string{BatchFailed}},
		{name: "cancelled in progress", lines: []openai.BatchLineItem{chatLine("a", "m", "1"), chatLine("b", "m", "2")},
			cancelAt: 1, wantStates: []string{BatchInProgress, BatchCancelled}, wantErr: map[string]string{"a": LineBatchCancelled, "b": LineBatchCancelled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewBatch(nil, WithBatchLimits(2+98*boolInt(tt.name != "over the request limit"), 0),
				WithBatchPlan(func(int, []string) BatchPlan { return tt.plan }))
			defer s.Close()
			c := batchClient(s)
			ctx := context.Background()
			f, err := c.UploadBatchFile(ctx, openai.UploadBatchFileRequest{FileName: "in.jsonl", Lines: tt.lines})
			if err != nil {
				t.Fatal(err)
			}
			if f.Purpose != "batch" || f.Bytes == 0 {
				t.Fatalf("file object %+v", f)
			}
			b, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions,
				Metadata: map[string]any{"ideaflow": "x"}})
			if err != nil {
				t.Fatal(err)
			}
			if b.Status != BatchValidating || b.CompletionWindow != "24h" || b.InputFileID != f.ID {
				t.Fatalf("created %+v", b.Batch)
			}
			var states []string
			for i := 1; ; i++ {
				r, err := c.RetrieveBatch(ctx, b.ID)
				if err != nil {
					t.Fatal(err)
				}
				states = append(states, r.Status)
				if terminal(r.Status) {
					b = r
					break
				}
				if i == tt.cancelAt {
					cr, err := c.CancelBatch(ctx, b.ID)
					if err != nil || cr.Status != BatchCancelling {
						t.Fatalf("cancel: %v %q", err, cr.Status)
					}
				}
				if i > 20 {
					t.Fatal("never ended")
				}
			}
			if !reflect.DeepEqual(states, tt.wantStates) {
				t.Fatalf("states %v, want %v", states, tt.wantStates)
			}
			if b.Status == BatchFailed {
				if b.Errors == nil || len(b.Errors.Data) == 0 {
					t.Fatal("failed batch without errors")
				}
				if b.OutputFileID != nil || b.ErrorFileID != nil {
					t.Fatal("failed batch with files")
				}
			}
			var ok []string
			for _, l := range readLines(t, c, deref(b.OutputFileID)) {
				if l.Response == nil || l.Response.StatusCode != 200 || l.Error != nil {
					t.Fatalf("output line %+v", l)
				}
				var body openai.ChatCompletionResponse
				if err := json.Unmarshal(l.Response.Body, &body); err != nil || len(body.Choices) != 1 || body.Choices[0].Message.Content == "" {
					t.Fatalf("body %s: %v", l.Response.Body, err)
				}
				ok = append(ok, l.CustomID)
			}
			if !reflect.DeepEqual(ok, tt.wantOK) {
				t.Fatalf("output %v, want %v", ok, tt.wantOK)
			}
			gotErr := map[string]string{}
			for _, l := range readLines(t, c, deref(b.ErrorFileID)) {
				switch {
				case l.Error != nil && l.Response == nil:
					gotErr[l.CustomID] = l.Error.Code
				case l.Response != nil && l.Error == nil:
					gotErr[l.CustomID] = fmt.Sprintf("status %d", l.Response.StatusCode)
				default:
					t.Fatalf("error line %+v", l)
				}
			}
			if len(gotErr) == 0 {
				gotErr = nil
			}
			if !reflect.DeepEqual(gotErr, tt.wantErr) {
				t.Fatalf("errors %v, want %v", gotErr, tt.wantErr)
			}
			ran := 0
			for _, n := range s.Executed() {
				ran += n
			}
			if ran != tt.wantRan {
				t.Fatalf("ran %d lines, want %d", ran, tt.wantRan)
			}
			for id, n := range s.Submitted() {
				if n != 1 && tt.name != "duplicate custom_id fails validation" {
					t.Fatalf("%s submitted %d times", id, n)
				}
			}
			if got := s.Counts(); got.Uploads != 1 || got.Creates != 1 || got.Retrieves != len(states) {
				t.Fatalf("counts %+v", got)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBatchFakeAnswersAsChat: a line's body is the reply the chat fake
// gives the same request synchronously (its id aside).
func TestBatchFakeAnswersAsChat(t *testing.T) {
	s := NewBatch(nil, WithBatchPlan(func(int, []string) BatchPlan {
		return BatchPlan{Lines: map[string]LineScript{"a": {Fault: Fault{Usage: &openai.Usage{PromptTokens: 9, CompletionTokens: 2,
			PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 8}}}}}}
	}))
	defer s.Close()
	c := batchClient(s)
	ctx := context.Background()
	line := chatLine("a", "m", "hello")
	s.Chat.Enqueue(Fault{Usage: &openai.Usage{PromptTokens: 9, CompletionTokens: 2, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 8}}})
	syncReply, err := c.CreateChatCompletion(ctx, line.Body)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.UploadBatchFile(ctx, openai.UploadBatchFileRequest{Lines: []openai.BatchLineItem{line}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions})
	if err != nil {
		t.Fatal(err)
	}
	for !terminal(b.Status) {
		if b, err = c.RetrieveBatch(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	lines := readLines(t, c, deref(b.OutputFileID))
	var got openai.ChatCompletionResponse
	if err := json.Unmarshal(lines[0].Response.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != syncReply.Choices[0].Message.Content || got.Model != syncReply.Model ||
		got.SystemFingerprint != syncReply.SystemFingerprint || !reflect.DeepEqual(got.Usage, syncReply.Usage) {
		t.Fatalf("batch %+v\nsync  %+v", got, syncReply)
	}
	if got.Usage.PromptTokensDetails.CachedTokens != 8 {
		t.Fatalf("cached tokens %+v", got.Usage)
	}
}

// TestBatchFakeList pages newest first with limit and after, and finds a
// batch by its metadata, as a resuming client does.
func TestBatchFakeList(t *testing.T) {
	s := NewBatch(nil)
	defer s.Close()
	c := batchClient(s)
	ctx := context.Background()
	f, err := c.UploadBatchFile(ctx, openai.UploadBatchFileRequest{Lines: []openai.BatchLineItem{chatLine("a", "m", "1")}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 5; i++ {
		b, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions,
			Metadata: map[string]any{"n": fmt.Sprint(i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{b.ID}, ids...) // newest first
	}
	var got []string
	var after *string
	limit := 2
	for pages := 0; ; pages++ {
		page, err := c.ListBatch(ctx, after, &limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Data {
			got = append(got, b.ID)
		}
		if !page.HasMore {
			break
		}
		after = &page.LastID
		if pages > 5 {
			t.Fatal("endless pages")
		}
	}
	if !reflect.DeepEqual(got, ids) {
		t.Fatalf("listed %v, want %v", got, ids)
	}
	if s.Submitted()["a"] != 5 {
		t.Fatalf("submitted %v", s.Submitted())
	}
}
