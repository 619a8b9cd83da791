package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"
)

// openAIClient talks to an OpenAI-compatible endpoint through go-openai.
type openAIClient struct {
	p          Provider
	api        *openai.Client
	lim        *limiter
	clock      Clock
	log        zerolog.Logger
	secrets    scrubber
	maxRetries int
	base, cap  time.Duration
	jitter     func(time.Duration) time.Duration
	timeout    time.Duration
}

func (c *openAIClient) Synthetic() bool { return false }

func (c *openAIClient) Limits() LimitState { return c.lim.state() }

func (c *openAIClient) Complete(ctx context.Context, req Request) (*Response, error) {
	cr, err := c.chatRequest(req)
	if err != nil {
		return nil, err
	}
	est := EstimateTokens(req)
	var out *Response
	attempts, status, err := c.withRetries(ctx, "chat", req.Model, est, func(ctx context.Context, cp *capture) (Usage, error) {
		resp, err := c.api.CreateChatCompletion(ctx, cr)
		if err != nil {
			return Usage{}, err
		}
		if len(resp.Choices) == 0 {
			return Usage{}, errEmptyChoices
		}
		msg := resp.Choices[0].Message
		text, reasoning := splitThink(msg.Content)
		if msg.ReasoningContent != "" {
			reasoning = msg.ReasoningContent
		} else if r := rawReasoning(cp.body.Bytes()); r != "" {
			reasoning = r
		}
		out = &Response{Text: text, Reasoning: reasoning, Model: resp.Model, SystemFingerprint: resp.SystemFingerprint,
			Usage: Usage{InputTokens: int64(resp.Usage.PromptTokens), OutputTokens: int64(resp.Usage.CompletionTokens)}}
		if out.Usage == (Usage{}) {
			// Some local servers report no usage; estimate it so cost and
			// token budgets still see the call.
			out.UsageEstimated = true
			out.Usage = Usage{InputTokens: est - completionBudget(req), OutputTokens: textTokens(msg.Content)}
		}
		return out.Usage, nil
	})
	if err != nil {
		return nil, err
	}
	out.Status, out.Attempts = status, attempts
	return out, nil
}

func completionBudget(req Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	return DefaultCompletionEstimate
}

func (c *openAIClient) Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error) {
	if len(inputs) == 0 {
		return nil, Usage{}, nil
	}
	var est int64
	for _, in := range inputs {
		est += textTokens(in)
	}
	var vecs [][]float32
	var usage Usage
	_, _, err := c.withRetries(ctx, "embeddings", model, est, func(ctx context.Context, _ *capture) (Usage, error) {
		resp, err := c.api.CreateEmbeddings(ctx, openai.EmbeddingRequest{Input: inputs, Model: openai.EmbeddingModel(model)})
		if err != nil {
			return Usage{}, err
		}
		if len(resp.Data) != len(inputs) {
			return Usage{}, fmt.Errorf("%w: %d vectors for %d inputs", errIncompleteEmbeddings, len(resp.Data), len(inputs))
		}
		out := make([][]float32, len(inputs))
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
				return Usage{}, fmt.Errorf("%w: index %d", errIncompleteEmbeddings, d.Index)
			}
			out[d.Index] = d.Embedding
		}
		vecs = out
		usage = Usage{InputTokens: int64(resp.Usage.PromptTokens)}
		if usage.InputTokens == 0 {
			usage.InputTokens = est
		}
		return usage, nil
	})
	if err != nil {
		return nil, Usage{}, err
	}
	return vecs, usage, nil
}

// chatRequest maps a Request onto go-openai's, refusing before any network
// traffic what go-openai itself would refuse.
func (c *openAIClient) chatRequest(req Request) (openai.ChatCompletionRequest, error) {
	cr := openai.ChatCompletionRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stop: req.Stop, Seed: req.Seed,
		Messages: make([]openai.ChatCompletionMessage, len(req.Messages))}
	for i, m := range req.Messages {
		cr.Messages[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	if req.Temperature != nil {
		cr.Temperature = explicitZero(*req.Temperature)
	}
	if req.TopP != nil {
		cr.TopP = explicitZero(*req.TopP)
	}
	switch {
	case len(req.JSONSchema) > 0:
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "answer", Schema: req.JSONSchema, Strict: true}}
	case req.JSONMode:
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	v := openai.NewReasoningValidator()
	if err := v.Validate(cr); errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated) {
		// Reasoning models take the completion budget as max_completion_tokens.
		cr.MaxCompletionTokens, cr.MaxTokens = cr.MaxTokens, 0
	}
	if err := v.Validate(cr); err != nil {
		return cr, &APIError{Provider: c.p.Name, Message: fmt.Sprintf("request for model %q refused before sending: %v", req.Model, err)}
	}
	return cr, nil
}

// explicitZero maps a sampling parameter onto go-openai's float32 field,
// whose omitempty tag would drop an explicit 0 and let the server apply its
// default (temperature 1). The smallest positive float32 survives omitempty
// and servers treat it as 0.
func explicitZero(f float64) float32 {
	if f == 0 {
		return math.SmallestNonzeroFloat32
	}
	return float32(f)
}

// splitThink moves a leading <think>...</think> block, which some servers
// (llama.cpp, Ollama with reasoning models) leave inside the content, out of
// the answer.
func splitThink(content string) (text, reasoning string) {
	trimmed := strings.TrimLeft(content, " \t\r\n")
	if !strings.HasPrefix(trimmed, "<think>") {
		return content, ""
	}
	end := strings.Index(trimmed, "</think>")
	if end < 0 {
		return content, ""
	}
	return strings.TrimLeft(trimmed[end+len("</think>"):], " \t\r\n"), strings.TrimSpace(trimmed[len("<think>"):end])
}

var reasoningField = []byte(`"reasoning"`)

// rawReasoning reads choices[0].message.reasoning from the raw reply: the
// name vLLM and OpenRouter use, which go-openai does not decode.
func rawReasoning(body []byte) string {
	if !bytes.Contains(body, reasoningField) {
		return ""
	}
	var r struct {
		Choices []struct {
			Message struct {
				Reasoning json.RawMessage `json:"reasoning"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &r) != nil || len(r.Choices) == 0 || len(r.Choices[0].Message.Reasoning) == 0 {
		return ""
	}
	raw := r.Choices[0].Message.Reasoning
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// withRetries runs call under the provider's limits until it succeeds, fails
// for good, or the retry budget is spent. It returns the attempts made and
// the final HTTP status.
func (c *openAIClient) withRetries(ctx context.Context, op, model string, est int64,
	call func(context.Context, *capture) (Usage, error)) (int, int, error) {
	for attempt := 1; ; attempt++ {
		t, err := c.lim.acquire(ctx, est)
		if err != nil {
			return attempt - 1, 0, fmt.Errorf("provider %q: %s call to %q: waiting for the rate limits: %w", c.p.Name, op, model, err)
		}
		cp := &capture{keepBody: op == "chat"}
		actx, cancel := context.WithTimeout(withCapture(ctx, cp), c.timeout)
		start := time.Now()
		usage, callErr := call(actx, cp)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if callErr == nil {
			c.lim.done(true)
			c.lim.correct(t, usage.InputTokens+usage.OutputTokens)
			c.log.Debug().Str("op", op).Str("model", model).Int("attempt", attempt).Int("status", cp.status).
				Dur("latency", time.Since(start)).Int64("tokens_in", usage.InputTokens).Int64("tokens_out", usage.OutputTokens).Msg("model call done")
			return attempt, cp.status, nil
		}
		c.lim.done(false)
		if ctx.Err() != nil {
			return attempt, cp.status, fmt.Errorf("provider %q: %s call to %q: %w", c.p.Name, op, model, ctx.Err())
		}
		apiErr, wait := c.classify(callErr, cp, timedOut, model, est)
		apiErr.Attempts = attempt
		if apiErr.Status == http.StatusTooManyRequests && apiErr.Retryable { // an exhausted quota is no congestion
			c.lim.throttled(t, wait)
		}
		if !apiErr.Retryable || attempt > c.maxRetries {
			c.log.Debug().Str("op", op).Str("model", model).Int("attempt", attempt).Int("status", apiErr.Status).
				Bool("retryable", apiErr.Retryable).Str("error", apiErr.Message).Msg("model call failed")
			return attempt, apiErr.Status, apiErr
		}
		if wait == 0 {
			wait = c.jitter(backoff(attempt, c.base, c.cap))
		}
		c.log.Warn().Str("op", op).Str("model", model).Int("attempt", attempt).Int("status", apiErr.Status).
			Dur("wait", wait).Str("error", apiErr.Message).Msg("retrying model call")
		if err := c.clock.Sleep(ctx, wait); err != nil {
			return attempt, apiErr.Status, fmt.Errorf("provider %q: %s call to %q: waiting to retry: %w", c.p.Name, op, model, err)
		}
	}
}

// classify turns one failed attempt into an APIError (message scrubbed) and
// the wait the server asked for, if any.
func (c *openAIClient) classify(err error, cp *capture, timedOut bool, model string, est int64) (*APIError, time.Duration) {
	e := &APIError{Provider: c.p.Name}
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	switch {
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		e.Message = strings.TrimSpace(excerpt(string(reqErr.Body), 300))
		if errors.As(reqErr.Err, &apiErr) {
			e.Message = apiErr.Message
		}
	case errors.As(err, &apiErr):
		e.Status = apiErr.HTTPStatusCode
		e.Message = apiErr.Message
		if apiErr.Code != nil {
			e.Code = fmt.Sprint(apiErr.Code)
		}
	case timedOut:
		e.Message = fmt.Sprintf("no reply within %s (the provider's per-request timeout)", c.timeout)
		e.Retryable = true
	case errors.Is(err, errEmptyChoices), errors.Is(err, errIncompleteEmbeddings):
		e.Status = cp.status
		e.Message = err.Error()
		e.Retryable = true
	case cp.status >= 200 && cp.status < 300:
		e.Status = cp.status
		e.Message = "reply body cut off or not valid JSON: " + err.Error()
		e.Retryable = true
	default:
		e.Message = "connection failed: " + err.Error()
		e.Retryable = true
	}
	if e.Status >= 300 { // an HTTP error reply: its status decides
		e.Retryable = retryableStatus(e.Status) && e.Code != "insufficient_quota"
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
		e.Message = c.explain(e.Status, e.Code, e.Message, model)
	}
	e.Message = c.secrets.scrub(e.Message)
	var wait time.Duration
	if e.Retryable {
		wait, _ = serverWait(cp.header, e.Status, c.clock.Now(), est)
	}
	return e, wait
}

// explain prefixes a server message with what the status means for the user.
func (c *openAIClient) explain(status int, code, msg, model string) string {
	switch status {
	case http.StatusUnauthorized:
		if c.p.APIKeyEnv == "" {
			return "authentication failed: " + msg + "; this provider sends no API key: name the environment variable that holds it with api_key_env"
		}
		return fmt.Sprintf("authentication failed: %s; the API key is read from environment variable %s: check that it holds a valid key for %s", msg, c.p.APIKeyEnv, c.baseURL())
	case http.StatusForbidden:
		return "permission denied: " + msg
	case http.StatusNotFound:
		return fmt.Sprintf("not found: %s; check base_url (%s) and the model name %q", msg, c.baseURL(), model)
	case http.StatusBadRequest:
		return "bad request: " + msg
	case http.StatusTooManyRequests:
		if code == "insufficient_quota" {
			return "quota exhausted (not retried): " + msg
		}
		return "rate limited: " + msg
	}
	if status >= 500 {
		return "server error: " + msg
	}
	return msg
}

func (c *openAIClient) baseURL() string {
	if c.p.BaseURL == "" {
		return "the default OpenAI endpoint"
	}
	return c.p.BaseURL
}
