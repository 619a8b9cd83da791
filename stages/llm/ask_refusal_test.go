package llm

import (
	"reflect"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// A refusal under Format.Refusals is re-asked exactly once with Reask,
// outside the repair budget, and both answers are kept.
func TestAskRefusalPhrasesReaskedOnce(t *testing.T) {
	spec := format.Spec{Kind: format.Text, Refusals: []string{"I cannot"}, Reask: "This is research."}
	tests := []struct {
		name         string
		answers      []string // in order; the last repeats
		repairs      int
		wantAttempts int
		want         format.Answer
	}{
		{"no refusal", []string{"An idea."}, 2, 1, format.Answer{Text: "An idea.", Raw: "An idea."}},
		{"refused, then answered", []string{"I cannot do that.", "An idea."}, 2, 2,
			format.Answer{Text: "An idea.", Refusal: "I cannot do that.", Raw: "An idea.", Reasked: true, FirstRaw: "I cannot do that."}},
		{"refused twice: an answer marked refused", []string{"I cannot do that.", "Sorry, I cannot."}, 2, 2,
			format.Answer{Text: "Sorry, I cannot.", Refusal: "I cannot do that.", Refused: true, Raw: "Sorry, I cannot.", Reasked: true, FirstRaw: "I cannot do that."}},
		{"re-asked even with no repairs", []string{"I cannot do that.", "An idea."}, 0, 2,
			format.Answer{Text: "An idea.", Refusal: "I cannot do that.", Raw: "An idea.", Reasked: true, FirstRaw: "I cannot do that."}},
		{"an empty answer is repaired, the refusal re-asked", []string{"", "I cannot do that.", "An idea."}, 1, 3,
			// The first answer was empty: Unrepaired gives "", known.
			format.Answer{Text: "An idea.", Refusal: "I cannot do that.", Raw: "An idea.", Reasked: true}},
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
			req := userRequest("gen", "Give an idea about soil.")
			req.Format = spec
			out, err := Ask(bg, c, req, nil, tt.repairs)
			if err != nil {
				t.Fatal(err)
			}
			if srv.Count() != tt.wantAttempts || len(out.Attempts) != tt.wantAttempts {
				t.Errorf("%d calls, %d attempts, want %d", srv.Count(), len(out.Attempts), tt.wantAttempts)
			}
			if !reflect.DeepEqual(*out.Answer, tt.want) {
				t.Errorf("answer %+v, want %+v", *out.Answer, tt.want)
			}
			for i, r := range srv.Requests() {
				msgs := r.Chat.Messages
				if i > 0 && tt.answers[i-1] == "I cannot do that." && msgs[len(msgs)-1].Content != "This is research." {
					t.Errorf("re-ask %d sent %q", i, msgs[len(msgs)-1].Content)
				}
			}
		})
	}
}

// An answer re-asked after a parse error keeps the first answer's text, so
// a compatibility parse can read what an original benchmark (which never
// re-asked) would have read; an answer accepted at once keeps its own.
func TestAskKeepsTheFirstAnswer(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	answers := []string{"I prefer the second idea.", "Ranking: B > A"}
	n := 0
	srv.SetResponder(func(*openai.ChatCompletionRequest) string {
		a := answers[min(n, len(answers)-1)]
		n++
		return a
	})
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	req := userRequest("judge", "Rank A and B.")
	req.Format = format.Spec{Kind: format.Ranking, Letters: "AB"}
	out, err := Ask(bg, c, req, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	a := out.Answer
	if !reflect.DeepEqual(a.Ranking, []string{"B", "A"}) || a.Raw != "Ranking: B > A" || !a.Reasked || a.FirstRaw != "I prefer the second idea." {
		t.Errorf("answer %+v", a)
	}
	if text, known := a.Unrepaired(); text != "I prefer the second idea." || !known {
		t.Errorf("Unrepaired = %q, %v", text, known)
	}
	if text, known := (&format.Answer{Raw: "Ranking: A > B"}).Unrepaired(); text != "Ranking: A > B" || !known {
		t.Errorf("an answer accepted at once: %q, %v", text, known)
	}
	if _, known := (&format.Answer{Ranking: []string{"A", "B"}}).Unrepaired(); known {
		t.Error("an answer stored without its text is known")
	}
}

// With ReaskAlone the re-ask after a refusal is a request of its own: the
// request's system message, then the re-ask as its only user message (the
// model never sees what it declined), as LiveIdeaBench sends its fallback
// prompt. Without it the re-ask follows the refusal.
func TestAskRefusalReaskAlone(t *testing.T) {
	for _, alone := range []bool{true, false} {
		srv := llmtest.New()
		n := 0
		srv.SetResponder(func(*openai.ChatCompletionRequest) string {
			n++
			if n == 1 {
				return "I cannot do that."
			}
			return "An idea."
		})
		c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
		req := userRequest("gen", "Give an idea about soil.")
		req.Messages = append([]Message{{Role: "system", Content: "You are a soil scientist."}}, req.Messages...)
		req.Format = format.Spec{Kind: format.Text, Refusals: []string{"I cannot"}, Reask: "Research only: give an idea about soil.", ReaskAlone: alone}
		out, err := Ask(bg, c, req, nil, 2)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if srv.Count() != 2 || out.Answer.Text != "An idea." || out.Answer.Refusal != "I cannot do that." {
			t.Fatalf("alone %v: %d calls, answer %+v", alone, srv.Count(), *out.Answer)
		}
		var got []string
		for _, m := range srv.Requests()[1].Chat.Messages {
			got = append(got, m.Role+": "+m.Content)
		}
		want := []string{"system: You are a soil scientist.", "user: Research only: give an idea about soil."}
		if !alone {
			want = []string{"system: You are a soil scientist.", "user: Give an idea about soil.", "assistant: I cannot do that.", "user: Research only: give an idea about soil."}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("alone %v: the re-ask sent %q, want %q", alone, got, want)
		}
	}
}
