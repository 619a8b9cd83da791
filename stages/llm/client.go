package llm

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"
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

// New connects to a provider. Kind "openai" is any OpenAI-compatible endpoint;
// kind "mock" answers offline with synthetic, well-formed answers. Secrets are
// read from the environment here, once, so a missing key fails before any call.
// Create one Client per provider block and share it: its limits are per Client.
func New(p Provider, opts ...Option) (Client, error) {
	o := options{clock: RealClock, log: zerolog.Nop(), base: DefaultBaseBackoff, cap: DefaultMaxBackoff,
		jitter: equalJitter, lookupEnv: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	if p.Name == "" {
		p.Name = p.Kind
	}
	if err := checkLimits(p); err != nil {
		return nil, fmt.Errorf("provider %q: %w", p.Name, err)
	}
	switch p.Kind {
	case "mock":
		return newMock(p), nil
	case "openai":
		return newOpenAI(p, o)
	default:
		return nil, fmt.Errorf("provider %q: unknown kind %q (want \"openai\" for any OpenAI-compatible endpoint, or \"mock\")", p.Name, p.Kind)
	}
}

func checkLimits(p Provider) error {
	switch {
	case p.MaxConcurrency < 0:
		return fmt.Errorf("max_concurrency must be 0 (default %d) or more, got %d", DefaultMaxConcurrency, p.MaxConcurrency)
	case p.RequestsPerMinute < 0:
		return fmt.Errorf("requests_per_minute must be 0 (unlimited) or more, got %g", p.RequestsPerMinute)
	case p.TokensPerMinute < 0:
		return fmt.Errorf("tokens_per_minute must be 0 (unlimited) or more, got %g", p.TokensPerMinute)
	case p.MaxRetries < -1:
		return fmt.Errorf("max_retries must be -1 (default %d) or more, got %d", DefaultMaxRetries, p.MaxRetries)
	case p.TimeoutSeconds < 0:
		return fmt.Errorf("timeout_seconds must be 0 (default %s) or more, got %g", DefaultTimeout, p.TimeoutSeconds)
	case p.RepairAttempts < -1:
		return fmt.Errorf("repair_attempts must be -1 (default %d) or more, got %d", DefaultRepairs, p.RepairAttempts)
	}
	return nil
}

// Repairs is the provider's number of re-asks after an unusable answer.
func (p Provider) Repairs() int {
	if p.RepairAttempts < 0 {
		return DefaultRepairs
	}
	return p.RepairAttempts
}

func newOpenAI(p Provider, o options) (*openAIClient, error) {
	env := func(name, what string) (string, error) {
		v, ok := o.lookupEnv(name)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("provider %q: %s is read from environment variable %s, which is not set or empty; set it in the shell that runs ideaflow (export %s=...)", p.Name, what, name, name)
		}
		return strings.TrimSpace(v), nil
	}
	var secrets scrubber
	key := ""
	if p.APIKeyEnv != "" {
		var err error
		if key, err = env(p.APIKeyEnv, "the API key"); err != nil {
			return nil, err
		}
		secrets = append(secrets, key)
	}
	cfg := openai.DefaultConfig(key)
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("provider %q: base_url %q is not an http(s) URL such as http://localhost:8000/v1", p.Name, p.BaseURL)
		}
		cfg.BaseURL = p.BaseURL
	}
	if p.OrgEnv != "" {
		org, err := env(p.OrgEnv, "the organisation id")
		if err != nil {
			return nil, err
		}
		cfg.OrgID = org
		secrets = append(secrets, org)
	}
	headers := http.Header{}
	for name, v := range p.Headers {
		headers.Set(name, v)
	}
	for name, envName := range p.HeaderEnv {
		v, err := env(envName, "header "+name)
		if err != nil {
			return nil, err
		}
		headers.Set(name, v)
		secrets = append(secrets, v)
	}

	maxConc := p.MaxConcurrency
	if maxConc == 0 {
		maxConc = DefaultMaxConcurrency
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
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	wrapped := *hc
	wrapped.Transport = &transport{base: base, headers: headers}
	cfg.HTTPClient = &wrapped

	c := &openAIClient{
		p: p, api: openai.NewClientWithConfig(cfg), clock: o.clock, log: o.log.With().Str("provider", p.Name).Logger(),
		secrets: secrets, maxRetries: DefaultMaxRetries, base: o.base, cap: o.cap, jitter: o.jitter, timeout: DefaultTimeout,
		lim: newLimiter(o.clock, maxConc, p.RequestsPerMinute, p.TokensPerMinute),
	}
	if p.MaxRetries >= 0 {
		c.maxRetries = p.MaxRetries
	}
	if p.TimeoutSeconds > 0 {
		c.timeout = time.Duration(p.TimeoutSeconds * float64(time.Second))
	}
	return c, nil
}
