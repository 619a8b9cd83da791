package llm

import (
	"fmt"
	"sort"
	"strings"
)

// Provider is a provider block, already decoded. The settings every HTTP kind
// shares are fields; a setting only some kinds declare (max_batch) lives in
// Settings, keyed by its name and typed per its Setting.Type. Set and the
// typed getters reach both alike. Operational settings (limits, retries,
// timeouts, sizes) never enter a cache key; who answers does (Identify: the
// kind's class and the endpoint's identity, from base_url or
// endpoint_identity, or the mock's seed).
type Provider struct {
	Name      string            // block label
	Kind      string            // a registered kind: see Kinds
	BaseURL   string            // base URL of the endpoint ("" for the kind's default, if it has one)
	APIKeyEnv string            // env var holding the API key; the key itself never leaves memory
	OrgEnv    string            // optional env var holding the organisation id
	HeaderEnv map[string]string // extra header name -> env var holding its (secret) value
	Headers   map[string]string // extra non-secret headers
	Seed      int64             // mock: seed of the synthetic answers

	MaxConcurrency    int     // 0: the kind's default
	RequestsPerMinute float64 // 0: unlimited
	TokensPerMinute   float64 // 0: unlimited
	MaxRetries        int     // -1: default
	TimeoutSeconds    float64 // per request; 0: default
	RepairAttempts    int     // re-asks after an unparseable answer; -1: default
	MaxReplyBytes     int     // largest reply body accepted; 0: DefaultMaxReplyBytes
	BreakerFailures   int     // consecutive failed requests that declare the provider unavailable; 0: DefaultBreakerFailures
	BreakerSeconds    float64 // seconds of failing requests without a success that declare it unavailable; 0: DefaultBreakerWindow

	// Settings holds the kind-specific settings that were set, by name.
	Settings map[string]any
}

// NewProvider is a provider block with every setting unset.
func NewProvider(name, kind string) Provider {
	return Provider{Name: name, Kind: kind, MaxRetries: -1, RepairAttempts: -1}
}

// Repairs is the provider's number of re-asks after an unusable answer.
func (p Provider) Repairs() int {
	if p.RepairAttempts < 0 {
		return DefaultRepairs
	}
	return p.RepairAttempts
}

// fields binds the settings stored in Provider's fields. Each entry reads and
// writes one field; a value has its setting's Go type (see SettingType).
var fields = map[string]struct {
	get func(p *Provider) any
	set func(p *Provider, v any)
}{
	"base_url":            {func(p *Provider) any { return p.BaseURL }, func(p *Provider, v any) { p.BaseURL = v.(string) }},
	"api_key_env":         {func(p *Provider) any { return p.APIKeyEnv }, func(p *Provider, v any) { p.APIKeyEnv = v.(string) }},
	"org_env":             {func(p *Provider) any { return p.OrgEnv }, func(p *Provider, v any) { p.OrgEnv = v.(string) }},
	"header_env":          {func(p *Provider) any { return p.HeaderEnv }, func(p *Provider, v any) { p.HeaderEnv = v.(map[string]string) }},
	"headers":             {func(p *Provider) any { return p.Headers }, func(p *Provider, v any) { p.Headers = v.(map[string]string) }},
	"seed":                {func(p *Provider) any { return int(p.Seed) }, func(p *Provider, v any) { p.Seed = int64(v.(int)) }},
	"max_concurrency":     {func(p *Provider) any { return p.MaxConcurrency }, func(p *Provider, v any) { p.MaxConcurrency = v.(int) }},
	"requests_per_minute": {func(p *Provider) any { return p.RequestsPerMinute }, func(p *Provider, v any) { p.RequestsPerMinute = v.(float64) }},
	"tokens_per_minute":   {func(p *Provider) any { return p.TokensPerMinute }, func(p *Provider, v any) { p.TokensPerMinute = v.(float64) }},
	"max_retries":         {func(p *Provider) any { return p.MaxRetries }, func(p *Provider, v any) { p.MaxRetries = v.(int) }},
	"timeout_seconds":     {func(p *Provider) any { return p.TimeoutSeconds }, func(p *Provider, v any) { p.TimeoutSeconds = v.(float64) }},
	"repair_attempts":     {func(p *Provider) any { return p.RepairAttempts }, func(p *Provider, v any) { p.RepairAttempts = v.(int) }},
	"max_reply_bytes":     {func(p *Provider) any { return p.MaxReplyBytes }, func(p *Provider, v any) { p.MaxReplyBytes = v.(int) }},
	"breaker_failures":    {func(p *Provider) any { return p.BreakerFailures }, func(p *Provider, v any) { p.BreakerFailures = v.(int) }},
	"breaker_seconds":     {func(p *Provider) any { return p.BreakerSeconds }, func(p *Provider, v any) { p.BreakerSeconds = v.(float64) }},
}

// Set stores the value of a setting of p's kind. v must have the setting's
// Go type: string, int, float64, bool or map[string]string.
func (p *Provider) Set(name string, v any) error {
	k, ok := LookupKind(p.Kind)
	if !ok {
		return fmt.Errorf("provider %q: %w", p.Name, unknownKind(p.Kind))
	}
	s, ok := k.Setting(name)
	if !ok {
		return fmt.Errorf("provider %q: kind %q has no setting %q (it has: %s)", p.Name, p.Kind, name, strings.Join(k.SettingNames(), ", "))
	}
	if err := s.Type.check(v); err != nil {
		return fmt.Errorf("provider %q: %s: %w", p.Name, name, err)
	}
	if f, ok := fields[name]; ok {
		f.set(p, v)
		return nil
	}
	if p.Settings == nil {
		p.Settings = map[string]any{}
	}
	p.Settings[name] = v
	return nil
}

// value is a setting's value: its field, else the Settings entry, else the
// kind's declared default (nil when it has none).
func (p Provider) value(s Setting) any {
	if f, ok := fields[s.Name]; ok {
		return f.get(&p)
	}
	if v, ok := p.Settings[s.Name]; ok {
		return v
	}
	return s.Default
}

// Get is the value of the setting of that name of p's kind, or its
// declared default when unset; false when the kind has no such setting.
func (p Provider) Get(name string) (any, bool) {
	k, _ := LookupKind(p.Kind)
	s, ok := k.Setting(name)
	if !ok {
		return nil, false
	}
	return p.value(s), true
}

// Int is the value of an int setting of p's kind declared outside the
// fields, or its default; 0 when the kind has no such setting.
func (p Provider) Int(name string) int {
	k, _ := LookupKind(p.Kind)
	if s, ok := k.Setting(name); ok {
		if v, ok := p.value(s).(int); ok {
			return v
		}
	}
	return 0
}

// check validates every setting of p against its kind's declaration, as
// New does before connecting (config reports the same checks located).
func (p Provider) check(k KindInfo) error {
	for _, s := range k.Settings {
		if s.Range != nil {
			if err := s.Range.Check(p.value(s)); err != nil {
				return fmt.Errorf("%s %w", s.Name, err)
			}
		}
		if s.Check == nil {
			continue
		}
		if err := s.Check(p.value(s)); err != nil {
			return fmt.Errorf("%s %w", s.Name, err)
		}
	}
	var extra []string
	for name := range p.Settings {
		if _, ok := k.Setting(name); !ok {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("kind %q has no setting %s (it has: %s)", k.Name, strings.Join(extra, ", "), strings.Join(k.SettingNames(), ", "))
	}
	return nil
}
