package llm

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// KindInfo declares a provider kind: what it serves and the settings its
// provider block accepts, the way a stage type declares its params. The
// config decoder reads it to check blocks; New reads it to connect.
type KindInfo struct {
	Name string
	Doc  string
	Chat bool     // serves chat completions (Client.Complete)
	Ops  []string // service operations served through ServiceClient (OpEmbeddings, ...)
	// Synthetic kinds make their answers up (the mock): a report built on
	// them says so.
	Synthetic bool
	// DefaultConcurrency is max_concurrency's default for this kind.
	DefaultConcurrency int
	// Identify says who answers a provider block of this kind (see
	// Answerer): key material of every node it serves. nil: an endpoint
	// identified by base_url when the kind has that setting, else the
	// kind's name (Provider.Identify).
	Identify func(p Provider) (Answerer, error)
	// AnswererDoc says, for the reference, what Identify keys answers on.
	AnswererDoc string
	Settings    []Setting // in documentation order; "kind" itself is not listed

	// Open connects a provider block of a kind registered from outside this
	// package (RegisterKind); o carries the options New was given (clock,
	// HTTP client, logger, environment) and builds the shared HTTP plumbing.
	// p has been checked against Settings.
	Open func(p Provider, o Opener) (Client, error)

	open func(p Provider, o options) (Client, error) // this package's kinds
}

// SettingType is the type of a setting's value, as written in a provider
// block, and fixes its Go type in Provider.Set.
type SettingType string

const (
	TypeString    SettingType = "string"      // string
	TypeInt       SettingType = "int"         // int
	TypeNumber    SettingType = "number"      // float64
	TypeBool      SettingType = "bool"        // bool
	TypeStringMap SettingType = "map(string)" // map[string]string
)

func (t SettingType) check(v any) error {
	ok := false
	switch t {
	case TypeString:
		_, ok = v.(string)
	case TypeInt:
		_, ok = v.(int)
	case TypeNumber:
		_, ok = v.(float64)
	case TypeBool:
		_, ok = v.(bool)
	case TypeStringMap:
		_, ok = v.(map[string]string)
	}
	if !ok {
		return fmt.Errorf("a %s setting cannot hold %T", t, v)
	}
	return nil
}

// Setting is one setting of a provider block.
type Setting struct {
	Name    string
	Type    SettingType
	Default any // documentation, and the value kind-specific getters return when unset; nil: none
	Doc     string
	// SecretEnv: the value names environment variables (a string: one; a
	// map: one per entry) holding secrets. They are read once, when the
	// client is made, masked in everything the provider returns, and
	// checked by config's MissingKeys before a run.
	SecretEnv bool
	Holds     string // SecretEnv: what the variable holds, e.g. "the API key"
	Required  bool
	// Path: the value is a file path; the config resolves a relative one
	// against the experiment file's folder, as it does a dataset's path.
	Path bool
	// Range bounds a number setting (TypeInt, TypeNumber): every count,
	// rate and size a user gives has one, checked by validate at the
	// attribute and printed by the reference. nil only for seeds.
	Range *Range
	// Check validates a value further (nil: any value of Type and Range).
	// Its error completes a sentence that starts with the setting's name.
	// A Path setting's value reaches Check resolved against the experiment
	// folder.
	Check func(v any) error
}

// Range is the values a number setting accepts: Min to Max, and 0 when
// Zero says what 0 means ("unlimited", "the default").
type Range struct {
	Min, Max float64
	Zero     string
}

// Check refuses a value outside the range, saying what is allowed.
func (r *Range) Check(v any) error {
	var f float64
	switch n := v.(type) {
	case int:
		f = float64(n)
	case float64:
		f = n
	}
	if (f == 0 && r.Zero != "") || (f >= r.Min && f <= r.Max) {
		return nil
	}
	return fmt.Errorf("must be %s, got %v", r, v)
}

// String says what the range allows: "0 (unlimited) or 1 to 1000000".
func (r *Range) String() string {
	s := fmt.Sprintf("%s to %s", number(r.Min), number(r.Max))
	if r.Zero != "" {
		s = fmt.Sprintf("0 (%s) or %s", r.Zero, s)
	}
	return s
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

var kinds = map[string]KindInfo{}

// RegisterKind adds a provider kind declared outside this package (the
// literature kinds, from their package's init): it then decodes, checks,
// connects and documents like the built-in kinds. k.Open must be set. It
// panics on a duplicate name, as flag and database/sql registrations do:
// two kinds of one name is a build error, not a run-time condition.
func RegisterKind(k KindInfo) {
	if k.Open == nil || k.open != nil {
		panic("llm: RegisterKind needs KindInfo.Open: " + k.Name)
	}
	register(k)
}

// register adds a kind; kinds register from init functions in this package.
func register(k KindInfo) {
	if _, dup := kinds[k.Name]; dup {
		panic("llm: provider kind registered twice: " + k.Name)
	}
	kinds[k.Name] = k
}

// LookupKind returns the registered kind of that name.
func LookupKind(name string) (KindInfo, bool) {
	k, ok := kinds[name]
	return k, ok
}

// Kinds returns every registered kind, sorted by name.
func Kinds() []KindInfo {
	out := make([]KindInfo, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KindNames lists the registered kinds' names, sorted.
func KindNames() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	return out
}

func unknownKind(name string) error {
	return fmt.Errorf("unknown kind %q (registered kinds: %s)", name, strings.Join(KindNames(), ", "))
}

// Setting returns the kind's setting of that name.
func (k KindInfo) Setting(name string) (Setting, bool) {
	for _, s := range k.Settings {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}

// SettingNames lists the kind's settings in declaration order.
func (k KindInfo) SettingNames() []string {
	out := make([]string, len(k.Settings))
	for i, s := range k.Settings {
		out[i] = s.Name
	}
	return out
}

// Serves reports whether the kind serves the operation.
func (k KindInfo) Serves(op string) bool {
	for _, o := range k.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// The settings kinds share, declared once. A kind lists the ones it accepts.
var (
	settingBaseURL = Setting{Name: "base_url", Type: TypeString, Doc: "base URL of the endpoint, e.g. http://localhost:8000/v1", Check: checkURL}
	settingAPIKey  = Setting{Name: "api_key_env", Type: TypeString, SecretEnv: true, Holds: "the API key",
		Doc: "environment variable holding the API key, sent as a bearer token"}
	settingOrg = Setting{Name: "org_env", Type: TypeString, SecretEnv: true, Holds: "the organisation id",
		Doc: "environment variable holding the organisation id"}
	settingHeaderEnv = Setting{Name: "header_env", Type: TypeStringMap, SecretEnv: true, Holds: "a header value",
		Doc: "extra headers whose secret values are read from environment variables: header name -> variable"}
	settingHeaders = Setting{Name: "headers", Type: TypeStringMap, Doc: "extra non-secret headers"}
	settingSeed    = Setting{Name: "seed", Type: TypeInt, Default: 0, Doc: "seed of the synthetic answers"}
	settingRPM     = Setting{Name: "requests_per_minute", Type: TypeNumber, Default: 0.0, Doc: "requests per minute (0: unlimited)",
		Range: &Range{Min: MinRequestsPerMinute, Max: MaxRequestsPerMinute, Zero: "unlimited"}}
	settingTPM = Setting{Name: "tokens_per_minute", Type: TypeNumber, Default: 0.0, Doc: "tokens per minute, estimated before and settled after each call (0: unlimited)",
		Range: &Range{Min: MinTokensPerMinute, Max: MaxTokensPerMinute, Zero: "unlimited"}}
	settingRetries = Setting{Name: "max_retries", Type: TypeInt, Default: DefaultMaxRetries, Doc: "retries of a call after a transient failure (429, 5xx, timeout; -1: the default)",
		Range: &Range{Min: -1, Max: MaxRetriesLimit}}
	settingTimeout = Setting{Name: "timeout_seconds", Type: TypeNumber, Default: DefaultTimeout.Seconds(), Doc: "per-request timeout in seconds",
		Range: &Range{Min: MinTimeoutSeconds, Max: MaxTimeoutSeconds, Zero: fmt.Sprintf("the default, %g", DefaultTimeout.Seconds())}}
	settingRepairs = Setting{Name: "repair_attempts", Type: TypeInt, Default: DefaultRepairs, Doc: "re-asks after an unparseable answer (-1: the default)",
		Range: &Range{Min: -1, Max: MaxRepairAttempts}}
	// settingNChoices lets the engine ask one request for the pending
	// independent samples of the same prompt (the OpenAI "n" parameter): the
	// input is sent, and billed, once. Opt-in: some endpoints ignore n, and
	// the engine then asks for the missing samples one by one.
	settingNChoices = Setting{Name: "n_choices", Type: TypeBool, Default: false,
		Doc: "send the pending independent samples of one prompt as one request with n choices (input billed once); samples with a seed are always sent one by one"}
	settingMaxReply = Setting{Name: "max_reply_bytes", Type: TypeInt, Default: DefaultMaxReplyBytes, Doc: "largest reply body accepted, in bytes; a larger reply fails without retry",
		Range: &Range{Min: 1, Max: MaxReplyBytesLimit, Zero: fmt.Sprintf("the default, %d", DefaultMaxReplyBytes)}}
	settingBreakerFailures = Setting{Name: "breaker_failures", Type: TypeInt, Default: DefaultBreakerFailures,
		Doc:   "consecutive failed requests (5xx, timeouts, connection failures; retries count) after which the provider is declared unavailable and every later call fails without a request",
		Range: &Range{Min: 1, Max: MaxBreakerFailures, Zero: fmt.Sprintf("the default, %d", DefaultBreakerFailures)}}
	settingBreakerSeconds = Setting{Name: "breaker_seconds", Type: TypeNumber, Default: DefaultBreakerWindow.Seconds(),
		Doc:   "seconds of requests failing without a single success after which the provider is declared unavailable",
		Range: &Range{Min: 1, Max: MaxBreakerSeconds, Zero: fmt.Sprintf("the default, %g", DefaultBreakerWindow.Seconds())}}
)

// The bounds of the shared settings, declared once. Each is far past what
// an endpoint serves one client, so only a typo (a misplaced exponent)
// meets it; each stops a value that would hang or exhaust a run:
// max_concurrency = 1e7 started 1.5 goroutines per slot up front and hung,
// requests_per_minute = 0.0001 waits a week between requests.
const (
	MaxConcurrencyLimit  = 1024 // calls in flight per provider
	MinRequestsPerMinute = 1    // slower is a stalled run: use 0 (unlimited) or a real rate
	MaxRequestsPerMinute = 1e9  // as good as unlimited: a declared bound, not a limit any endpoint meets
	MinTokensPerMinute   = 1000 // below it one small request waits a minute
	MaxTokensPerMinute   = 1e12
	MaxRetriesLimit      = 100
	MinTimeoutSeconds    = 0.01
	MaxTimeoutSeconds    = 3600 // reasoning models can think for many minutes, not hours
	MaxRepairAttempts    = 10
	MaxReplyBytesLimit   = 1 << 30 // a reply is held in memory
	MaxBreakerFailures   = 100_000
	MaxBreakerSeconds    = 86_400 // a day
	MaxBatchLimit        = 100_000
)

// HTTPSettings are the settings of every kind that talks HTTP through
// httpcall (Opener.Connect reads them), with the kind's default
// concurrency; a kind outside this package starts its Settings from them.
func HTTPSettings(concurrency int) []Setting { return httpSettings(concurrency) }

// WithSettings is base plus extra; an extra setting named like one of base
// replaces it in place. Without returns base minus the named settings.
func WithSettings(base []Setting, extra ...Setting) []Setting { return withSettings(base, extra...) }

// Without is base without the settings of those names (a kind with its own
// rate setting drops requests_per_minute).
func Without(base []Setting, names ...string) []Setting {
	var out []Setting
next:
	for _, s := range base {
		for _, n := range names {
			if s.Name == n {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// CheckURL is the Setting.Check of an http(s) URL ("" passes).
func CheckURL(v any) error { return checkURL(v) }

// httpSettings are the settings of every kind that talks HTTP through
// httpcall, with the kind's default concurrency.
func httpSettings(concurrency int) []Setting {
	return []Setting{settingBaseURL, settingEndpointIdentity, settingAPIKey, settingHeaders, settingHeaderEnv,
		maxConcurrency(concurrency), settingRPM, settingTPM, settingRetries, settingTimeout, settingMaxReply,
		settingBreakerFailures, settingBreakerSeconds}
}

// maxConcurrency declares max_concurrency with the kind's default.
func maxConcurrency(def int) Setting { return MaxConcurrency(def) }

// MaxConcurrency declares max_concurrency with a kind's default, bounded by
// MaxConcurrencyLimit: the engine starts its workers per slot up front.
func MaxConcurrency(def int) Setting {
	return Setting{Name: "max_concurrency", Type: TypeInt, Default: def, Doc: "calls in flight at once (0: the default; lowered adaptively when more than a quarter of recent requests are answered 429)",
		Range: &Range{Min: 1, Max: MaxConcurrencyLimit, Zero: fmt.Sprintf("the default, %d", def)}}
}

// maxBatch declares a kind's max_batch setting with its default.
func maxBatch(def int, doc string) Setting {
	return Setting{Name: "max_batch", Type: TypeInt, Default: def, Doc: doc, Range: &Range{Min: 1, Max: MaxBatchLimit}}
}

// withSettings is base plus extra; an extra setting named like one of base
// replaces it in place (a kind making base_url required).
func withSettings(base []Setting, extra ...Setting) []Setting {
	out := append([]Setting(nil), base...)
next:
	for _, x := range extra {
		for i := range out {
			if out[i].Name == x.Name {
				out[i] = x
				continue next
			}
		}
		out = append(out, x)
	}
	return out
}

func checkURL(v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL such as http://localhost:8000/v1", s)
	}
	return nil
}
