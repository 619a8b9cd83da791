package llm

import (
	"context"
	"fmt"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// What a provider kind registered outside this package (RegisterKind) needs
// to be built like the built-in ones: the options New was given, the shared
// HTTP plumbing, and a refusal of chat and Embed for a kind that serves only
// operations.

// Opener is what KindInfo.Open receives: the options of the New call.
type Opener struct{ o options }

// Clock is the clock of rate limits and back-off (a fake one in tests).
func (o Opener) Clock() Clock { return o.o.clock }

// Logger is the logger New was given.
func (o Opener) Logger() zerolog.Logger { return o.o.log }

// LookupEnv reads an environment variable the way New was told to.
func (o Opener) LookupEnv(name string) (string, bool) { return o.o.lookupEnv(name) }

// Connect builds the HTTP plumbing of a provider block of kind k from the
// settings HTTPSettings declares: its secrets read once from the
// environment (and masked in everything the server returns), one limiter
// (max_concurrency, requests_per_minute, tokens_per_minute), the retry
// policy, the per-request timeout, the reply-size cap and the breaker.
func (o Opener) Connect(k KindInfo, p Provider) (*Conn, error) {
	c, err := newConn(k, p, o.o)
	if err != nil {
		return nil, err
	}
	return &Conn{conn: c}, nil
}

// Conn is one provider block's HTTP plumbing. Embedding it gives a client
// Limits, Unavailable and Synthetic, which the engine reads.
type Conn struct{ *conn }

// Caller runs attempts under the provider's limits, retries and breaker.
func (c *Conn) Caller() *httpcall.Caller { return c.caller }

// HTTP is the client whose transport adds the extra headers, caps replies
// and scrubs secrets from them.
func (c *Conn) HTTP() *http.Client { return c.http }

// APIKey is the value of the variable api_key_env names ("" when unset).
// It is for a request header only: never log it, never put it in a body.
func (c *Conn) APIKey() string { return c.cred.key }

// Scrubber masks the provider's secrets, in every JSON spelling. The
// transport applies it to every reply body; a client applies it again to
// what it decoded from one before returning it.
func (c *Conn) Scrubber() *httpcall.Scrubber { return c.cred.scrub }

// Provider is the block the connection was built from.
func (c *Conn) Provider() Provider { return c.p }

// ServiceOnly is the Complete and Embed of a client whose kind serves only
// operations: both refuse, naming the kinds that would serve them.
type ServiceOnly struct{ noChat }

// NewServiceOnly is ServiceOnly for provider (its block's name) of kind.
func NewServiceOnly(provider, kind string) ServiceOnly {
	return ServiceOnly{noChat{provider: provider, kindName: kind}}
}

// Embed refuses: the kind serves no embeddings.
func (s ServiceOnly) Embed(_ context.Context, model string, _ []string) ([][]float32, Usage, error) {
	k, _ := LookupKind(s.kindName)
	return nil, Usage{}, unservedOp(s.provider, k, OpEmbeddings)
}

// UnservedOp is the error for an operation kind does not serve.
func UnservedOp(provider, kind, op string) error {
	k, _ := LookupKind(kind)
	return unservedOp(provider, k, op)
}

// MockOp answers one service operation on the mock kind, deterministically
// from the request (and p's seed): no network, the same reply every time.
type MockOp func(ctx context.Context, p Provider, req ServiceRequest) (*ServiceResponse, error)

var mockOps = map[string]MockOp{}

// RegisterMockOp makes the mock kind serve op through serve, so that a
// package declaring operations (stages/literature) can run offline on the
// mock like every other stage. It must be called from an init function
// (the registry is not locked); it panics when op is already served.
func RegisterMockOp(op string, serve MockOp) {
	k := kinds["mock"]
	if k.Serves(op) {
		panic(fmt.Sprintf("llm: mock already serves %q", op))
	}
	mockOps[op] = serve
	k.Ops = append(append([]string(nil), k.Ops...), op)
	kinds["mock"] = k
}
