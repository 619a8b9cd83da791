package llm

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Answerer is who answers a provider's calls, as far as the cache is
// concerned. Two providers with equal Answerers are taken to give the same
// answer to the same request, so they share cached answers; two with
// different Answerers never do. The engine makes it key material of every
// model and service node (engine/DESIGN.md, "Keys: what is, and is never,
// key material"): a mock's answer never serves a real endpoint's node, nor
// the reverse, and one gateway's answer never serves another's unless the
// user declares them the same (endpoint_identity).
//
// What is not in it is what does not change an answer: the provider
// block's name, credentials, limits, retries, timeouts, headers.
type Answerer struct {
	// Class is what kind of thing answers: ClassMock (made-up answers),
	// ClassBaseline (exact sanity controls), ClassCorpus (a local file of
	// papers) or ClassEndpoint (a server: OpenAI-compatible chat and
	// embeddings, TEI, Semantic Scholar).
	Class string `json:"class"`
	// Identity tells answerers of one class apart: an endpoint's normalised
	// base URL (NormalizeURL) or its declared endpoint_identity; the seed of
	// the mock or the baseline (it changes their answers); the digest of a
	// corpus file's contents.
	Identity string `json:"identity,omitempty"`
	// Synthetic says the answers are made up (the mock): whatever they feed
	// is labelled SYNTHETIC.
	Synthetic bool `json:"synthetic,omitempty"`
}

// The answerer classes of the registered kinds.
const (
	ClassMock     = "mock"
	ClassBaseline = "baseline"
	ClassEndpoint = "endpoint"
	ClassCorpus   = "corpus"
)

// String is how plans and `show` name an answerer: "mock seed 7",
// "endpoint https://api.openai.com/v1".
func (a Answerer) String() string {
	if a.Identity == "" {
		return a.Class
	}
	return a.Class + " " + a.Identity
}

// settingEndpointIdentity is declared once, for every kind that talks to a
// server (httpSettings): the user's word that two endpoints answer alike.
var settingEndpointIdentity = Setting{Name: "endpoint_identity", Type: TypeString,
	Doc: "who answers, for the cache: providers of the same endpoint identity share cached answers (declare it when two gateways serve " +
		"the same models, e.g. a router and the vendor's API; a URL is normalised like base_url); default: the normalised base_url " +
		"(scheme and host lower-cased, default port, credentials, query and trailing slash dropped)",
	Check: func(v any) error {
		if s, _ := v.(string); s != "" && strings.TrimSpace(s) == "" {
			return fmt.Errorf("is blank; give a name such as \"openai\" or a URL, or leave it out")
		}
		return nil
	}}

// Identify is who answers p's calls: its kind's KindInfo.Identify, else,
// for a kind registered without one, an endpoint identified by its
// base_url when it has that setting, else the kind's name as its class. It
// reads what it needs of p only (a corpus kind reads its file), never the
// environment: a plan keys nodes without any API key.
func (p Provider) Identify() (Answerer, error) {
	k, ok := LookupKind(p.Kind)
	if !ok {
		return Answerer{}, fmt.Errorf("provider %q: %w", p.Name, unknownKind(p.Kind))
	}
	if k.Identify != nil {
		a, err := k.Identify(p)
		if err != nil {
			return Answerer{}, fmt.Errorf("provider %q: %w", p.Name, err)
		}
		return a, nil
	}
	if _, ok := k.Setting(settingBaseURL.Name); ok {
		return EndpointAnswerer(p, "")
	}
	return Answerer{Class: k.Name, Synthetic: k.Synthetic}, nil
}

// EndpointAnswerer is the Answerer of a provider that talks to a server:
// class ClassEndpoint, identified by its endpoint_identity when it declares
// one, else by its base_url (defaultURL when unset), normalised.
func EndpointAnswerer(p Provider, defaultURL string) (Answerer, error) {
	if v, _ := p.Settings[settingEndpointIdentity.Name].(string); strings.TrimSpace(v) != "" {
		id := strings.TrimSpace(v)
		if n, err := NormalizeURL(id); err == nil {
			id = n
		}
		return Answerer{Class: ClassEndpoint, Identity: id}, nil
	}
	base := p.BaseURL
	if base == "" {
		base = defaultURL
	}
	if base == "" {
		return Answerer{}, fmt.Errorf("kind %q has no default endpoint: set base_url", p.Kind)
	}
	id, err := NormalizeURL(base)
	if err != nil {
		return Answerer{}, fmt.Errorf("base_url: %w", err)
	}
	return Answerer{Class: ClassEndpoint, Identity: id}, nil
}

// seededAnswerer is the Answerer of an offline kind whose answers are a
// function of the request and the provider's seed.
func seededAnswerer(class string, synthetic bool) func(p Provider) (Answerer, error) {
	return func(p Provider) (Answerer, error) {
		return Answerer{Class: class, Identity: "seed " + strconv.FormatInt(p.Seed, 10), Synthetic: synthetic}, nil
	}
}

// NormalizeURL is the endpoint identity of a base URL: the scheme and host
// lower-cased, the scheme's default port dropped, user credentials, query
// and fragment dropped, trailing slashes dropped; the path kept as written
// (paths are case-sensitive). "HTTPS://user:pw@API.OpenAI.com:443/v1/?x=1"
// and "https://api.openai.com/v1" are one endpoint.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", raw)
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	switch {
	case port != "":
		host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		host = "[" + host + "]" // an IPv6 literal
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/"), nil
}
