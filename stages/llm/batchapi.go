package llm

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// BatchAPI is implemented by chat clients whose endpoint may sell a batch
// interface (the openai kind: OpenAI's Batch API). A batch client
// (stages/llm/batch) builds its input lines, talks to the files and
// batches routes, and reads the answers through it, so that a request goes
// out in a batch exactly as Complete would send it, and a batch answer is
// exactly the Response Complete would have returned for the same reply.
type BatchAPI interface {
	// ChatRequest is the body Complete sends for req (refusing what
	// Complete refuses before sending).
	ChatRequest(req Request) (openai.ChatCompletionRequest, error)
	// DecodeChat is what Complete makes of a chat completion reply body
	// for req: the same decoding, reasoning extraction, usage (cached
	// tokens included) and estimate, and the same secret masking, bytes
	// first and then every decoded field. Status and Attempts are left for
	// the caller.
	DecodeChat(req Request, body []byte) (*Response, error)
	// FilesAPI is a go-openai client on the same endpoint, key,
	// organisation and extra headers, whose replies are masked like every
	// other and capped at maxReply bytes (batch output files are far
	// larger than one answer; 0: no cap). It applies no rate limits or
	// retries of its own: the batch routes have their own limits, and a
	// batch creation is not idempotent, so its caller decides what may be
	// repeated.
	FilesAPI(maxReply int64) *openai.Client
}

// ChatRequest is BatchAPI.ChatRequest.
func (c *openAIClient) ChatRequest(req Request) (openai.ChatCompletionRequest, error) {
	return c.chatRequest(req)
}

// DecodeChat is BatchAPI.DecodeChat. The body is masked here because a
// batch line reaches it from a file download that went through the
// transport whole (masked already), or from anywhere else a caller read it.
func (c *openAIClient) DecodeChat(req Request, body []byte) (*Response, error) {
	body = c.cred.scrub.ScrubBytes(body)
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("decode chat completion: %w", err)
	}
	return c.answer(resp, body, req, EstimateTokens(req))
}

// FilesAPI is BatchAPI.FilesAPI.
func (c *openAIClient) FilesAPI(maxReply int64) *openai.Client {
	hc := *c.http
	if t, ok := hc.Transport.(*httpcall.Transport); ok {
		t2 := *t
		t2.MaxReply = maxReply
		hc.Transport = &t2
	}
	cfg := c.cfg
	cfg.HTTPClient = &hc
	return openai.NewClientWithConfig(cfg)
}
