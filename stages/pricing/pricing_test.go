package pricing

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/batch"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

func f(v float64) *float64 { return &v }

// mini is a price block with every discount given (USD per million tokens).
var mini = stages.Price{InputPerMTok: 0.15, OutputPerMTok: 0.60, CachedInputPerMTok: f(0.075),
	BatchInputPerMTok: f(0.075), BatchOutputPerMTok: f(0.30), BatchCachedInputPerMTok: f(0.0375)}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestCost(t *testing.T) {
	plain := stages.Price{InputPerMTok: 2, OutputPerMTok: 8}
	u := llm.Usage{InputTokens: 2000, OutputTokens: 500, CachedTokens: 1024}
	tests := []struct {
		name  string
		price stages.Price
		usage llm.Usage
		mode  Mode
		want  float64
	}{
		{"sync, no cache", mini, llm.Usage{InputTokens: 2000, OutputTokens: 500}, Sync, (2000*0.15 + 500*0.60) / 1e6},
		{"sync, cached", mini, u, Sync, (976*0.15 + 1024*0.075 + 500*0.60) / 1e6},
		{"batch, cached", mini, u, Batch, (976*0.075 + 1024*0.0375 + 500*0.30) / 1e6},
		{"no discounts given: batch at sync rates", plain, u, Batch, (2000*2 + 500*8) / 1e6},
		{"no cached price: cached at input", plain, u, Sync, (2000*2 + 500*8) / 1e6},
		{"batch without batch cached price: batch input", stages.Price{InputPerMTok: 2, OutputPerMTok: 8, BatchInputPerMTok: f(1), CachedInputPerMTok: f(0.5)}, u, Batch,
			(2000*1 + 500*8) / 1e6},
		{"free: 0 is a price, not unset", stages.Price{InputPerMTok: 2, OutputPerMTok: 8, BatchInputPerMTok: f(0), BatchOutputPerMTok: f(0)}, u, Batch, 0},
		{"more cached than input is held to input", mini, llm.Usage{InputTokens: 100, CachedTokens: 900}, Sync, 100 * 0.075 / 1e6},
	}
	for _, tt := range tests {
		if got := Cost(tt.price, tt.usage, tt.mode); !near(got, tt.want) {
			t.Errorf("%s: cost %.10g, want %.10g", tt.name, got, tt.want)
		}
	}
}

// TestRunPricedWithCachedTokens: the same four calls, made synchronously
// and through a batch against the fake, the fake reporting 1,024 of each
// prompt's 2,000 tokens cached: the batch run costs exactly what the
// batch rates say, half the synchronous run at these prices.
func TestRunPricedWithCachedTokens(t *testing.T) {
	usage := &openai.Usage{PromptTokens: 2000, CompletionTokens: 500, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1024}}
	srv := llmtest.NewBatch(nil, llmtest.WithBatchPlan(func(_ int, ids []string) llmtest.BatchPlan {
		lines := map[string]llmtest.LineScript{}
		for _, id := range ids {
			lines[id] = llmtest.LineScript{Fault: llmtest.Fault{Usage: usage}}
		}
		return llmtest.BatchPlan{Lines: lines}
	}))
	defer srv.Close()
	c, err := llm.New(llm.Provider{Name: "fake", Kind: "openai", BaseURL: srv.URL, APIKeyEnv: "K"},
		llm.WithHTTPClient(srv.HTTPClient()), llm.WithEnv(func(string) (string, bool) { return "sk-x", true }))
	if err != nil {
		t.Fatal(err)
	}
	var items []batch.Item
	var syncCost float64
	for i := 0; i < 4; i++ {
		req := llm.Request{Model: "mini", Messages: []llm.Message{{Role: "user", Content: fmt.Sprint("idea ", i)}}}
		items = append(items, batch.Item{Key: fmt.Sprint("k", i), Request: req})
		srv.Chat.Enqueue(llmtest.Fault{Usage: usage})
		r, err := c.Complete(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		syncCost += Cost(mini, r.Usage, Sync)
	}
	j, err := batch.OpenFile(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	clock := llmtest.NewFakeClock(llmtest.Epoch)
	bc, err := batch.New(c, j, batch.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bc.Submit(t.Context(), items); err != nil {
		t.Fatal(err)
	}
	var batchCost float64
	var cached int64
	if err := bc.Wait(t.Context(), func(r batch.Result) error {
		if r.Failure != nil {
			return r.Failure
		}
		cached += r.Response.Usage.CachedTokens
		batchCost += Cost(mini, r.Response.Usage, Batch)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantSync := 4 * (976*0.15 + 1024*0.075 + 500*0.60) / 1e6
	wantBatch := 4 * (976*0.075 + 1024*0.0375 + 500*0.30) / 1e6
	if cached != 4*1024 || !near(syncCost, wantSync) || !near(batchCost, wantBatch) || !near(batchCost*2, syncCost) {
		t.Fatalf("cached %d, sync $%.8f (want %.8f), batch $%.8f (want %.8f)", cached, syncCost, wantSync, batchCost, wantBatch)
	}
}
