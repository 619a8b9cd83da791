package llm

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// Option adjusts a Client beyond its Provider block.
type Option func(*options)

type options struct {
	clock     Clock
	http      *http.Client
	log       zerolog.Logger
	base, cap time.Duration
	jitter    func(time.Duration) time.Duration
	lookupEnv func(string) (string, bool)
	shared    func(Provider) (SharedLimit, error)
}

// SharedLimit is a provider's rate limit kept with other processes: every
// request waits on it (after the client's own limits), and a 429's
// Retry-After holds it for every process sharing it.
type SharedLimit = httpcall.Shared

// WithSharedLimits gives each provider's client the limit shared returns
// for its settings (nil: none), e.g. one over a JetStream KV key per API
// key, so that workers on several machines keep to one
// requests_per_minute and tokens_per_minute together.
func WithSharedLimits(shared func(Provider) (SharedLimit, error)) Option {
	return func(o *options) { o.shared = shared }
}

// WithClock sets the clock used for rate limiting and back-off (default RealClock).
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithHTTPClient sets the HTTP client; its transport is wrapped, never modified.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.http = c } }

// WithLogger sets the logger for retries and calls (default: none).
func WithLogger(l zerolog.Logger) Option { return func(o *options) { o.log = l } }

// WithBaseBackoff sets the first retry's back-off (default 1 s); it doubles per retry.
func WithBaseBackoff(d time.Duration) Option { return func(o *options) { o.base = d } }

// WithMaxBackoff caps the computed back-off (default 60 s).
func WithMaxBackoff(d time.Duration) Option { return func(o *options) { o.cap = d } }

// WithJitter replaces the back-off jitter (default: keep half, randomise half).
// Tests pass an identity to make waits exact.
func WithJitter(f func(time.Duration) time.Duration) Option { return func(o *options) { o.jitter = f } }

// WithEnv replaces os.LookupEnv for reading the key, organisation and secret headers.
func WithEnv(lookup func(string) (string, bool)) Option {
	return func(o *options) { o.lookupEnv = lookup }
}

// New connects to a provider through its kind's registration (see Kinds).
// Secrets are read from the environment here, once, so a missing key fails
// before any call. Create one Client per provider block and share it: its
// limits are per Client. A Client of a kind with operations also implements
// ServiceClient; a Client of a kind without chat answers Complete with an
// error saying so.
func New(p Provider, opts ...Option) (Client, error) {
	o := options{clock: RealClock, log: zerolog.Nop(), base: DefaultBaseBackoff, cap: DefaultMaxBackoff,
		jitter: httpcall.EqualJitter, lookupEnv: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	if p.Name == "" {
		p.Name = p.Kind
	}
	k, ok := LookupKind(p.Kind)
	if !ok {
		return nil, fmt.Errorf("provider %q: %w", p.Name, unknownKind(p.Kind))
	}
	if err := p.check(k); err != nil {
		return nil, fmt.Errorf("provider %q: %w", p.Name, err)
	}
	if k.open != nil {
		return k.open(p, o)
	}
	return k.Open(p, Opener{o: o})
}

// credentials are a provider's secrets, read from the environment once.
type credentials struct {
	key, org string
	headers  http.Header // extra headers, plain and secret
	scrub    *httpcall.Scrubber
}

// readCredentials reads every SecretEnv setting of the kind that p sets and
// builds the scrubber that masks their values.
func readCredentials(k KindInfo, p Provider, o options) (credentials, error) {
	env := func(name, what string) (string, error) {
		v, ok := o.lookupEnv(name)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("provider %q: %s is read from environment variable %s, which is not set or empty; set it in the shell that runs ideaflow (export %s=...)", p.Name, what, name, name)
		}
		return strings.TrimSpace(v), nil
	}
	c := credentials{headers: http.Header{}}
	for name, v := range p.Headers {
		c.headers.Set(name, v)
	}
	var secrets []string
	for _, s := range k.Settings {
		if !s.SecretEnv {
			continue
		}
		switch v := p.value(s).(type) {
		case string:
			if v == "" {
				continue
			}
			secret, err := env(v, s.Holds)
			if err != nil {
				return c, err
			}
			secrets = append(secrets, secret)
			switch s.Name {
			case settingAPIKey.Name:
				c.key = secret
			case settingOrg.Name:
				c.org = secret
			}
		case map[string]string: // header name -> variable
			for header, envName := range v {
				secret, err := env(envName, "header "+header)
				if err != nil {
					return c, err
				}
				c.headers.Set(header, secret)
				secrets = append(secrets, secret)
			}
		}
	}
	c.scrub = httpcall.NewScrubber(secrets...)
	return c, nil
}

// conn is what every HTTP kind builds from its block: the Caller (limits,
// retries, scrubbing) and an HTTP client whose transport adds the extra
// headers, caps and scrubs replies.
type conn struct {
	p      Provider
	kind   KindInfo
	cred   credentials
	caller *httpcall.Caller
	http   *http.Client
	dims   dimensions // the vector length of each model, once it has answered
}

func newConn(k KindInfo, p Provider, o options) (*conn, error) {
	cred, err := readCredentials(k, p, o)
	if err != nil {
		return nil, err
	}
	maxConc := p.MaxConcurrency
	if maxConc == 0 {
		maxConc = k.DefaultConcurrency
	}
	hc := o.http
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Keep a warm connection per concurrent call; the default of 2 idle
		// connections per host turns every burst into fresh TCP handshakes.
		t.MaxIdleConnsPerHost = maxConc
		t.MaxIdleConns = max(t.MaxIdleConns, maxConc)
		hc = &http.Client{Transport: t}
	}
	maxReply := int64(p.MaxReplyBytes)
	if maxReply == 0 {
		maxReply = DefaultMaxReplyBytes
	}
	wrapped := *hc
	wrapped.Transport = &httpcall.Transport{Base: hc.Transport, Headers: cred.headers, Scrub: cred.scrub, MaxReply: maxReply}
	window := time.Duration(p.BreakerSeconds * float64(time.Second)) // 0: the default
	c := &httpcall.Caller{
		Provider: p.Name, Limiter: httpcall.NewLimiter(o.clock, maxConc, p.RequestsPerMinute, p.TokensPerMinute),
		Breaker: httpcall.NewBreaker(o.clock, p.Name, p.BreakerFailures, window),
		Clock:   o.clock, Log: o.log.With().Str("provider", p.Name).Logger(), Scrub: cred.scrub,
		MaxRetries: DefaultMaxRetries, Base: o.base, Cap: o.cap, Jitter: o.jitter, Timeout: DefaultTimeout, MaxReply: maxReply,
	}
	if p.MaxRetries >= 0 {
		c.MaxRetries = p.MaxRetries
	}
	if o.shared != nil {
		s, err := o.shared(p)
		if err != nil {
			return nil, fmt.Errorf("provider %q: shared rate limit: %w", p.Name, err)
		}
		if s != nil { // a nil *T in the interface would be called
			c.Shared = s
		}
	}
	if p.TimeoutSeconds > 0 {
		c.Timeout = time.Duration(p.TimeoutSeconds * float64(time.Second))
	}
	return &conn{p: p, kind: k, cred: cred, caller: c, http: &wrapped}, nil
}

func (c *conn) Limits() LimitState { return c.caller.Limiter.State() }

// Unavailable is Availability.Unavailable.
func (c *conn) Unavailable() error { return c.caller.Breaker.State().Unavailable }

func (c *conn) Synthetic() bool { return c.kind.Synthetic }

// bearer is the Authorization header of plain-HTTP kinds: the key when one
// is configured, nothing otherwise (a local server without auth).
func (c *conn) bearer() http.Header {
	h := http.Header{}
	if c.cred.key != "" {
		h.Set("Authorization", "Bearer "+c.cred.key)
	}
	return h
}

// noChat is the Complete of kinds that serve only operations.
type noChat struct{ provider, kindName string }

func (n noChat) Complete(_ context.Context, req Request) (*Response, error) {
	k, _ := LookupKind(n.kindName)
	return nil, &APIError{Provider: n.provider, Message: fmt.Sprintf(
		"kind %q serves no chat completions (it serves %s), so model %q cannot be asked through it; give the model a provider of a chat kind (%s)",
		n.kindName, strings.Join(k.Ops, ", "), req.Model, strings.Join(chatKinds(), ", "))}
}

func chatKinds() []string {
	var out []string
	for _, k := range Kinds() {
		if k.Chat {
			out = append(out, k.Name)
		}
	}
	return out
}
