package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/stages/format"
)

// DefaultRepairs is how many times an unusable answer is re-asked by default.
const DefaultRepairs = 2

// Attempt is one model call made for a structured answer, as a node records it.
type Attempt struct {
	Raw       string        `json:"raw,omitempty"`       // the answer text as given
	Reasoning string        `json:"reasoning,omitempty"` // reasoning kept out of Raw
	Err       string        `json:"error,omitempty"`     // why the call failed or the answer was refused
	Status    int           `json:"status,omitempty"`    // HTTP status (0 for the mock, or no reply)
	Latency   time.Duration `json:"latency_ns"`
	Repair    bool          `json:"repair,omitempty"` // a re-ask after an unusable answer
	HTTP      int           `json:"http_attempts,omitempty"`
	Model     string        `json:"model,omitempty"` // model the server says answered
	Usage     Usage         `json:"usage"`
}

// Outcome is a structured answer and how it was obtained.
type Outcome struct {
	Answer   *format.Answer
	Response *Response // the last completion
	Attempts []Attempt // every call, repairs included
	Usage    Usage     // summed over Attempts
}

// Ask asks for a structured answer: it calls the model, parses the text with
// req.Format, and hands the parsed answer to accept (a stage's own check; nil
// accepts anything). When either rejects the answer, the model's answer and a
// repair message naming the problem are appended to the conversation and the
// model is asked again, up to repairs times (negative: DefaultRepairs). Then
// Ask fails with a *ParseError holding the last raw text.
//
// With req.Format.Refusals set, a refusal is instead re-asked once, outside
// the repair budget; the answer then carries the refusal (Answer.Refusal),
// and a second refusal is returned as an answer marked Refused.
//
// Transport failures are not repaired: the client already retried them, and
// the *APIError (or context error) is returned as is. On every failure the
// Outcome is returned too, with the attempts made and the tokens spent.
func Ask(ctx context.Context, c Client, req Request, accept func(*format.Answer) error, repairs int) (*Outcome, error) {
	if repairs < 0 {
		repairs = DefaultRepairs
	}
	out := &Outcome{}
	if err := req.Format.Validate(); err != nil { // no answer could parse: do not pay for one
		return out, fmt.Errorf("ask %q: invalid answer format: %w", req.Model, err)
	}
	cur := req
	// A refusal under Format.Refusals (LiveIdeaBench's rule) is re-asked
	// exactly once, outside the repair budget, and both answers are kept:
	// the re-ask is part of the method, not a repair, and how a model
	// refuses is a result. The whole exchange is one node keyed on the first
	// request, so a warm run replays it without a call.
	phrases := len(req.Format.Refusals) > 0
	refusal, repaired := "", 0
	for i := 0; ; i++ {
		start := time.Now()
		resp, err := c.Complete(ctx, cur)
		at := Attempt{Repair: i > 0, Latency: time.Since(start)}
		if err != nil {
			at.Err = err.Error()
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				at.Status, at.HTTP = apiErr.Status, apiErr.Attempts
			}
			out.Attempts = append(out.Attempts, at)
			return out, err
		}
		at.Raw, at.Reasoning, at.Status, at.HTTP, at.Model, at.Usage = resp.Text, resp.Reasoning, resp.Status, resp.Attempts, resp.Model, resp.Usage
		out.Response = resp
		out.Usage.InputTokens += resp.Usage.InputTokens
		out.Usage.OutputTokens += resp.Usage.OutputTokens
		out.Usage.CachedTokens += resp.Usage.CachedTokens

		ans, perr := format.Parse(req.Format, resp.Text)
		if perr == nil && accept != nil {
			perr = accept(ans)
		}
		if perr == nil {
			out.Attempts = append(out.Attempts, at)
			ans.Refusal = refusal
			ans.Raw = resp.Text
			if i > 0 {
				ans.Reasked, ans.FirstRaw = true, out.Attempts[0].Raw
			}
			out.Answer = ans
			return out, nil
		}
		at.Err = perr.Error()
		out.Attempts = append(out.Attempts, at)
		isRefusal := phrases && errors.Is(perr, format.ErrRefusal)
		if isRefusal && refusal != "" {
			// Refused again: an answer, not a failure, for the stage to count.
			out.Answer = &format.Answer{Text: strings.TrimSpace(resp.Text), Refusal: refusal, Refused: true,
				Raw: resp.Text, Reasked: true, FirstRaw: out.Attempts[0].Raw}
			return out, nil
		}
		if isRefusal {
			refusal = strings.TrimSpace(resp.Text)
		} else if repaired++; repaired > repairs {
			return out, &ParseError{Raw: resp.Text, Err: perr, Attempts: len(out.Attempts)}
		}
		if isRefusal && req.Format.ReaskAlone {
			// A request of its own: the system messages, then the re-ask.
			var msgs []Message
			for _, m := range req.Messages {
				if m.Role == "system" {
					msgs = append(msgs, m)
				}
			}
			cur.Messages = append(msgs, Message{Role: "user", Content: format.RepairMessage(req.Format, perr)})
			continue
		}
		msgs := make([]Message, 0, len(cur.Messages)+2)
		msgs = append(msgs, cur.Messages...)
		msgs = append(msgs,
			Message{Role: "assistant", Content: resp.Text},
			Message{Role: "user", Content: format.RepairMessage(req.Format, perr)})
		cur.Messages = msgs
	}
}
