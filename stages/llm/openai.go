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

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

func init() {
	register(KindInfo{
		Name: "openai",
		Doc: "Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server, gateways): chat completions " +
			"through POST {base_url}/chat/completions, embeddings through POST {base_url}/embeddings.",
		Chat: true, Ops: []string{OpEmbeddings}, DefaultConcurrency: DefaultMaxConcurrency,
		Settings: withSettings(httpSettings(DefaultMaxConcurrency), requiredKey(), settingOrg, settingRepairs,
			maxBatch(DefaultEmbeddingBatch, "embedding inputs per request"), settingNChoices,
			settingBatch, settingBatchMaxRequests, settingBatchWindow, settingBatchRetry, settingBatchPoll),
		Identify:    func(p Provider) (Answerer, error) { return EndpointAnswerer(p, openai.DefaultConfig("").BaseURL) },
		AnswererDoc: "the class endpoint and endpoint_identity, by default the normalised base_url (https://api.openai.com/v1 when unset)",
		open:        newOpenAI,
	})
}

// The batch settings (engine/batchexec): with batch = true the run sends
// this provider's chat calls through the provider's Batch API (at its
// batch price) instead of one request each. They change no answer: a
// batch answer is keyed, stored and read like a synchronous one.
var (
	settingBatch = Setting{Name: "batch", Type: TypeBool, Default: false,
		Doc: "send chat calls through the Batch API (upload, batch, poll, download; priced at the model's batch price): the calls ready at once go in one batch, a round per stage depth; answers are the same as synchronous ones and share their cache"}
	settingBatchMaxRequests = Setting{Name: "batch_max_requests", Type: TypeInt, Default: DefaultBatchMaxRequests,
		Doc:   "most requests in one batch round (the API takes at most 50000 per file; a round of several models makes one file each)",
		Range: &Range{Min: 1, Max: 50_000, Zero: fmt.Sprintf("the default, %d", DefaultBatchMaxRequests)}}
	settingBatchWindow = Setting{Name: "batch_window", Type: TypeString, Default: "24h",
		Doc: "the batch's completion window, as the API spells it (OpenAI offers 24h)", Check: checkWindow}
	settingBatchRetry = Setting{Name: "batch_retry", Type: TypeString, Default: "batch",
		Doc:   "what to do with a line that failed transiently (expired, timed out, server error): \"batch\" asks it again in the next round, \"sync\" asks it synchronously at once, \"none\" fails the node",
		Check: checkBatchRetry}
	settingBatchPoll = Setting{Name: "batch_poll_seconds", Type: TypeNumber, Default: 15.0,
		Doc:   "first wait between polls of a running batch, doubled after each poll up to 10 minutes",
		Range: &Range{Min: 0.001, Max: 3600, Zero: "the default, 15"}}
)

// DefaultBatchMaxRequests is batch_max_requests' default: a round's tasks
// each hold a goroutine until their batch ends, so a round is kept well
// under the API's 50000 lines per file.
const DefaultBatchMaxRequests = 10_000

func checkWindow(v any) error {
	s, _ := v.(string)
	n := strings.TrimSuffix(s, "h")
	if n == s || n == "" || strings.Trim(n, "0123456789") != "" {
		return fmt.Errorf("must be a number of hours such as \"24h\", got %q", s)
	}
	return nil
}

func checkBatchRetry(v any) error {
	switch s, _ := v.(string); s {
	case "batch", "sync", "none":
		return nil
	default:
		return fmt.Errorf("must be \"batch\", \"sync\" or \"none\", got %q", s)
	}
}

// requiredKey is api_key_env for the openai kind: OpenAI-compatible servers
// nearly all want one, and a forgotten one should fail at validate, not at
// the first 401. A local server without auth takes any variable that is set.
func requiredKey() Setting {
	s := settingAPIKey
	s.Required = true
	s.Doc += "; for a local server without auth, name a variable holding any value"
	return s
}

// openAIClient talks to an OpenAI-compatible endpoint: chat through
// go-openai, embeddings through the shared embedder. Both go through one
// conn, so they share the provider's limits.
type openAIClient struct {
	*conn
	api *openai.Client
	cfg openai.ClientConfig // api's configuration, for BatchAPI's client
	emb *embedder
}

func newOpenAI(p Provider, o options) (Client, error) {
	k, _ := LookupKind(p.Kind)
	c, err := newConn(k, p, o)
	if err != nil {
		return nil, err
	}
	cfg := openai.DefaultConfig(c.cred.key)
	if p.BaseURL != "" {
		cfg.BaseURL = p.BaseURL
	}
	cfg.OrgID = c.cred.org
	cfg.HTTPClient = c.http
	auth := c.bearer()
	if c.cred.org != "" {
		auth.Set("OpenAI-Organization", c.cred.org)
	}
	return &openAIClient{conn: c, api: openai.NewClientWithConfig(cfg), cfg: cfg, emb: newEmbedder(c, cfg.BaseURL, auth)}, nil
}

func (c *openAIClient) Complete(ctx context.Context, req Request) (*Response, error) {
	cr, err := c.chatRequest(req)
	if err != nil {
		return nil, err
	}
	est := EstimateTokens(req)
	var out *Response
	attempts, status, err := c.caller.Do(ctx, "chat", req.Model, est, true, func(ctx context.Context, cp *httpcall.Capture) (httpcall.Tokens, error) {
		resp, err := c.api.CreateChatCompletion(ctx, cr)
		if err != nil {
			return httpcall.Tokens{}, err
		}
		if out, err = c.answer(resp, cp.Body.Bytes(), req, est); err != nil {
			return httpcall.Tokens{}, err
		}
		return httpcall.Tokens{In: out.Usage.InputTokens, Out: out.Usage.OutputTokens}, nil
	}, c.classify(req.Model))
	if err != nil {
		return nil, err
	}
	out.Status, out.Attempts = status, attempts
	return out, nil
}

// answer is what Complete makes of a chat completion reply (resp decoded
// from body): the one place a reply becomes a Response, shared with batch
// output lines (DecodeChat), so that a batch answer is, byte for byte, the
// synchronous one.
func (c *openAIClient) answer(resp openai.ChatCompletionResponse, body []byte, req Request, est int64) (*Response, error) {
	if len(resp.Choices) == 0 {
		return nil, errEmptyChoices
	}
	msg := resp.Choices[0].Message
	text, reasoning := splitThink(msg.Content)
	if msg.ReasoningContent != "" {
		reasoning = msg.ReasoningContent
	} else if r := rawReasoning(body); r != "" {
		reasoning = r
	}
	out := &Response{Text: text, Reasoning: reasoning, Model: resp.Model, SystemFingerprint: resp.SystemFingerprint,
		Usage: Usage{InputTokens: int64(resp.Usage.PromptTokens), OutputTokens: int64(resp.Usage.CompletionTokens),
			CachedTokens: cachedTokens(resp.Usage)}}
	c.scrubDecoded(out)
	if out.Usage == (Usage{}) {
		// Some local servers report no usage; estimate it so cost and
		// token budgets still see the call.
		out.UsageEstimated = true
		out.Usage = Usage{InputTokens: est - completionBudget(req), OutputTokens: textTokens(msg.Content)}
	}
	return out, nil
}

// cachedTokens is usage.prompt_tokens_details.cached_tokens: the part of the
// prompt the server served from its prompt cache (billed at cached_input).
func cachedTokens(u openai.Usage) int64 {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return int64(u.PromptTokensDetails.CachedTokens)
}

// CompleteChoices asks one request for len(samples) independent answers to
// req (n choices); answer i stands for samples[i]. An endpoint that ignores n
// returns fewer: the caller asks for the rest one by one. The input is billed
// once, so the first answer carries the input tokens; the output tokens are
// shared out by each choice's length.
func (c *openAIClient) CompleteChoices(ctx context.Context, req Request, samples []int) ([]*Response, error) {
	cr, err := c.chatRequest(req)
	if err != nil {
		return nil, err
	}
	cr.N = len(samples)
	est := EstimateTokens(req) + int64(len(samples)-1)*completionBudget(req)
	var out []*Response
	attempts, status, err := c.caller.Do(ctx, "chat", req.Model, est, true, func(ctx context.Context, cp *httpcall.Capture) (httpcall.Tokens, error) {
		resp, err := c.api.CreateChatCompletion(ctx, cr)
		if err != nil {
			return httpcall.Tokens{}, err
		}
		if len(resp.Choices) == 0 {
			return httpcall.Tokens{}, errEmptyChoices
		}
		out = make([]*Response, 0, len(resp.Choices))
		var chars int64
		for _, ch := range resp.Choices {
			chars += int64(len(ch.Message.Content)) + 1
		}
		for i, ch := range resp.Choices {
			if i == len(samples) {
				break
			}
			text, reasoning := splitThink(ch.Message.Content)
			if ch.Message.ReasoningContent != "" {
				reasoning = ch.Message.ReasoningContent
			}
			r := &Response{Text: text, Reasoning: reasoning, Model: resp.Model, SystemFingerprint: resp.SystemFingerprint}
			c.scrubDecoded(r)
			r.Usage.OutputTokens = int64(resp.Usage.CompletionTokens) * (int64(len(ch.Message.Content)) + 1) / chars
			if i == 0 {
				r.Usage.InputTokens, r.Usage.CachedTokens = int64(resp.Usage.PromptTokens), cachedTokens(resp.Usage)
			}
			if resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0 {
				r.UsageEstimated = true
				r.Usage.OutputTokens = textTokens(ch.Message.Content)
				if i == 0 {
					r.Usage.InputTokens = EstimateTokens(req) - completionBudget(req)
				}
			}
			out = append(out, r)
		}
		return httpcall.Tokens{In: int64(resp.Usage.PromptTokens), Out: int64(resp.Usage.CompletionTokens)}, nil
	}, c.classify(req.Model))
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		r.Status, r.Attempts = status, attempts
	}
	return out, nil
}

// scrubDecoded masks secrets in the decoded fields of an answer. The
// transport masked the reply's bytes in every JSON spelling already; this
// checks what decoding made of them, so a secret cannot reach an answer by
// a path the byte-level search did not foresee.
func (c *openAIClient) scrubDecoded(r *Response) {
	c.cred.scrub.ScrubStrings(&r.Text, &r.Reasoning, &r.Model, &r.SystemFingerprint)
}

func completionBudget(req Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	return DefaultCompletionEstimate
}

// errEmptyChoices: a 200 without choices. Gateways (content filters, routers
// whose upstream hiccuped, servers under memory pressure) send it transiently
// and a second ask normally answers, while there is nothing to parse or
// repair in it, so it is treated like a 5xx.
var errEmptyChoices = errors.New("reply has no choices")

// Embed is Client.Embed, through the embeddings route of the same endpoint.
func (c *openAIClient) Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error) {
	return c.emb.Embed(ctx, model, inputs)
}

// Call serves OpEmbeddings through the embeddings route of the same endpoint.
func (c *openAIClient) Call(ctx context.Context, req ServiceRequest) (*ServiceResponse, error) {
	return c.emb.Call(ctx, req)
}

// chatRequest maps a Request onto go-openai's, refusing before any network
// traffic what go-openai itself would refuse.
func (c *openAIClient) chatRequest(req Request) (openai.ChatCompletionRequest, error) {
	//lint:ignore SA1019 max_tokens is the field every OpenAI-compatible server accepts (vLLM, OpenRouter, gateways); reasoning models are moved to max_completion_tokens below.
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
		//lint:ignore SA1019 moving the deprecated field into its replacement is the point of this line.
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

// classify reads go-openai's errors: its RequestError (a non-JSON error
// body) and APIError (an OpenAI-style error object) carry the status; a 200
// without choices is retried.
func (c *openAIClient) classify(model string) httpcall.Classify {
	return func(err error, cp *httpcall.Capture) *httpcall.Error {
		e := &httpcall.Error{}
		var reqErr *openai.RequestError
		var apiErr *openai.APIError
		switch {
		case errors.As(err, &reqErr):
			e.Status = reqErr.HTTPStatusCode
			// The transport masked secrets in the body before this cut.
			e.Message = httpcall.Excerpt(string(reqErr.Body), httpcall.ErrorExcerpt)
			if errors.As(reqErr.Err, &apiErr) {
				e.Message = apiErr.Message
				e.Code = apiCode(apiErr)
			}
		case errors.As(err, &apiErr):
			e.Status = apiErr.HTTPStatusCode
			e.Message = apiErr.Message
			e.Code = apiCode(apiErr)
		case errors.Is(err, errEmptyChoices):
			return &httpcall.Error{Status: cp.Status, Message: err.Error(), Retryable: true}
		default:
			return nil
		}
		if e.Status < 300 {
			return nil
		}
		e.Retryable = httpcall.RetryableStatus(e.Status) && e.Code != httpcall.CodeInsufficientQuota
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
		e.Message = c.explain(e.Status, e.Code, e.Message, model)
		return e
	}
}

// apiCode is the code of an OpenAI-style error object (an exhausted quota
// also by its type alone; see httpcall.ErrorCode). go-openai decodes
// "code": null as the number 0: no code.
func apiCode(e *openai.APIError) string {
	code := ""
	switch c := e.Code.(type) {
	case nil:
	case int:
		if c != 0 {
			code = fmt.Sprint(c)
		}
	default:
		code = fmt.Sprint(c)
	}
	return httpcall.ErrorCode(code, e.Type)
}
