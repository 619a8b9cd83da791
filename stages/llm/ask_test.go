package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

var ratingSpec = format.Spec{Kind: format.Rating, Min: 1, Max: 10}

func ratingRequest() Request {
	r := userRequest("judge", "Rate the overlap.")
	r.Format = ratingSpec
	return r
}

func TestAskRepair(t *testing.T) {
	tests := []struct {
		name         string
		answers      []string // in order; the last repeats
		accept       func(*format.Answer) error
		repairs      int
		wantAttempts int
		wantRating   int // 0: want a *ParseError
		wantRaw      string
	}{
		{name: "first answer good", answers: []string{"Rating: 7\nExplanation: close."}, repairs: 2, wantAttempts: 1, wantRating: 7},
		{name: "unparseable then good", answers: []string{"I think it is quite similar.", "Rating: 8\nExplanation: same method."},
			repairs: 2, wantAttempts: 2, wantRating: 8},
		{name: "always unparseable", answers: []string{"no idea", "still no idea", "really, no idea"},
			repairs: 2, wantAttempts: 3, wantRaw: "really, no idea"},
		{name: "negative repairs means the default of 2", answers: []string{"hmm"}, repairs: -1, wantAttempts: 3, wantRaw: "hmm"},
		{name: "no repairs", answers: []string{"hmm"}, repairs: 0, wantAttempts: 1, wantRaw: "hmm"},
		{name: "out of range is repaired", answers: []string{"Rating: 14\nExplanation: very.", "Rating: 10\nExplanation: very."},
			repairs: 2, wantAttempts: 2, wantRating: 10},
		{name: "stage check rejects, then accepts", answers: []string{"Rating: 3\nExplanation: a.", "Rating: 4\nExplanation: b."},
			accept: func(a *format.Answer) error {
				if a.Rating == 3 {
					return errors.New("rating 3 is reserved")
				}
				return nil
			}, repairs: 2, wantAttempts: 2, wantRating: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			n := 0
			srv.SetResponder(func(*openai.ChatCompletionRequest) string {
				a := tt.answers[min(n, len(tt.answers)-1)]
				n++
				return a
			})
			c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
			out, err := Ask(bg, c, ratingRequest(), tt.accept, tt.repairs)
			if out == nil || len(out.Attempts) != tt.wantAttempts || srv.Count() != tt.wantAttempts {
				t.Fatalf("attempts = %+v (server %d), want %d", out, srv.Count(), tt.wantAttempts)
			}
			for i, at := range out.Attempts {
				if at.Repair != (i > 0) || at.Status != 200 || at.HTTP != 1 || at.Model != "judge" {
					t.Errorf("attempt %d = %+v", i, at)
				}
				if i < tt.wantAttempts-1 && at.Err == "" {
					t.Errorf("attempt %d has no error recorded", i)
				}
			}
			var wantUsage Usage
			for _, at := range out.Attempts {
				wantUsage.InputTokens += at.Usage.InputTokens
				wantUsage.OutputTokens += at.Usage.OutputTokens
			}
			if out.Usage != wantUsage || out.Usage.InputTokens == 0 {
				t.Errorf("Usage = %+v, want the sum %+v", out.Usage, wantUsage)
			}
			if tt.wantRating != 0 {
				if err != nil || out.Answer == nil || out.Answer.Rating != tt.wantRating {
					t.Fatalf("answer %+v, err %v; want rating %d", out.Answer, err, tt.wantRating)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Raw != tt.wantRaw || pe.Attempts != tt.wantAttempts || out.Answer != nil {
				t.Fatalf("err = %v, want *ParseError with raw %q", err, tt.wantRaw)
			}
			if out.Attempts[len(out.Attempts)-1].Raw != tt.wantRaw {
				t.Errorf("last attempt raw = %q", out.Attempts[len(out.Attempts)-1].Raw)
			}
		})
	}
}

// TestAskRepairConversation: a re-ask carries the bad answer and a repair
// message naming the problem, after the original messages.
func TestAskRepairConversation(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Text: "It is similar."}, llmtest.Fault{Text: "Rating: 6\nExplanation: ok."})
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	if _, err := Ask(bg, c, ratingRequest(), nil, 2); err != nil {
		t.Fatal(err)
	}
	second := srv.Requests()[1].Chat.Messages
	if len(second) != 3 || second[0].Content != "Rate the overlap." ||
		second[1].Role != "assistant" || second[1].Content != "It is similar." || second[2].Role != "user" {
		t.Fatalf("repair conversation = %+v", second)
	}
	_, perr := format.Parse(ratingSpec, "It is similar.")
	if want := format.RepairMessage(ratingSpec, perr); second[2].Content != want {
		t.Errorf("repair message = %q, want %q", second[2].Content, want)
	}
}

func TestAskRefusalIsRepairedAndDetectable(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.SetResponder(func(*openai.ChatCompletionRequest) string { return "I'm sorry, but I can't help with that." })
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	_, err := Ask(bg, c, ratingRequest(), nil, 1)
	if !errors.Is(err, format.ErrRefusal) {
		t.Fatalf("err = %v, want it to wrap format.ErrRefusal", err)
	}
	if !strings.Contains(srv.Requests()[1].Chat.Messages[2].Content, "scientific benchmark") {
		t.Errorf("refusal repair message = %q", srv.Requests()[1].Chat.Messages[2].Content)
	}
}

func TestAskTransportErrorNotRepaired(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Status: 400, Message: "context length exceeded"})
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	out, err := Ask(bg, c, ratingRequest(), nil, 2)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || srv.Count() != 1 {
		t.Fatalf("err = %v after %d requests", err, srv.Count())
	}
	if len(out.Attempts) != 1 || out.Attempts[0].Status != 400 || out.Attempts[0].HTTP != 1 ||
		!strings.Contains(out.Attempts[0].Err, "context length exceeded") {
		t.Fatalf("attempts = %+v", out.Attempts)
	}
}

func TestAskWithRetriesInside(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Status: 503}, llmtest.Fault{Text: "nothing useful"}, llmtest.Fault{Status: 429},
		llmtest.Fault{Text: "Rating: 2\nExplanation: far apart."})
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	out, err := Ask(bg, c, ratingRequest(), nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%d/%d %d/%d", len(out.Attempts), out.Attempts[0].HTTP, out.Answer.Rating, out.Attempts[1].HTTP); got != "2/2 2/2" {
		t.Fatalf("attempts/http-first rating/http-second = %s, want 2/2 2/2", got)
	}
	if out.Response.Attempts != 2 || out.Response.Text != "Rating: 2\nExplanation: far apart." {
		t.Errorf("last response = %+v", out.Response)
	}
}

func TestAskInvalidFormatMakesNoCall(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	req := userRequest("judge", "Rank.")
	req.Format = format.Spec{Kind: "poem"}
	out, err := Ask(bg, c, req, nil, 2)
	if err == nil || !strings.Contains(err.Error(), `ask "judge": invalid answer format`) || srv.Count() != 0 || len(out.Attempts) != 0 {
		t.Fatalf("err = %v, %d requests, outcome %+v", err, srv.Count(), out)
	}
}
