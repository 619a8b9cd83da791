package config

// provider blocks. A provider's schema is its kind's: the settings that
// kind declares in the llm registry (llm.LookupKind), so a new kind needs no
// change here. The block is checked against them as soon as its kind is
// known — at collection when kind is a literal, as it nearly always is, so
// that an unknown setting is reported with the other structural errors —
// and each setting is decoded by its declared type.

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages/llm"
)

func (l *loader) collectProvider(b *hcl.Block, add func(*decl)) {
	d := &decl{addr: "provider." + b.Labels[0], kind: "provider", name: b.Labels[0], block: b, declRange: b.DefRange}
	attrs, diags := b.Body.JustAttributes()
	l.diags = append(l.diags, diags...)
	d.content = &hcl.BodyContent{Attributes: attrs, MissingItemRange: b.Body.MissingItemRange()}
	kind, ok := attrs["kind"]
	switch {
	case !ok:
		l.errorf(&d.declRange, "Missing required argument",
			"The argument \"kind\" is required: it says what the provider talks to. Add kind = \"...\" with one of: %s.", kindList())
	case len(kind.Expr.Variables()) == 0: // a literal: check now
		if v, diags := kind.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			l.checkProvider(d, v.AsString(), kind)
		}
	}
	add(d)
}

// checkProvider checks a provider block's attributes against its kind's
// settings: the kind must be registered, every attribute one of its
// settings, every required setting present.
func (l *loader) checkProvider(d *decl, kind string, kindAttr *hcl.Attribute) {
	d.checked = true
	k, ok := llm.LookupKind(kind)
	if !ok {
		l.errorf(kindAttr.Expr.Range().Ptr(), fmt.Sprintf("Unknown provider kind %q", kind),
			"kind must be one of the registered provider kinds: %s.", kindList())
		return
	}
	for _, a := range sortedAttrs(d.content.Attributes) {
		if _, ok := k.Setting(a.Name); !ok && a.Name != "kind" {
			l.errorf(a.NameRange.Ptr(), "Unsupported argument",
				"An argument named %q is not expected in a provider of kind %q. It accepts: kind, %s.", a.Name, kind, strings.Join(k.SettingNames(), ", "))
		}
	}
	for _, s := range k.Settings {
		if _, set := d.content.Attributes[s.Name]; s.Required && !set {
			l.errorf(d.declRange.Ptr(), "Missing "+s.Name, "A provider of kind %q needs %s: %s. Add %s = ... to the block.", kind, s.Name, s.Doc, s.Name)
		}
	}
}

// kindList names every registered kind with its description.
func kindList() string {
	var out []string
	for _, k := range llm.Kinds() {
		doc := k.Doc
		if i := strings.IndexAny(doc, ":(."); i > 0 {
			doc = strings.TrimSpace(doc[:i])
		}
		out = append(out, fmt.Sprintf("%q (%s)", k.Name, doc))
	}
	return strings.Join(out, ", ")
}

func (l *loader) evalProvider(d *decl) {
	a := d.content.Attributes
	before := errorCount(l.diags)
	kind, _ := l.str(a, "kind", nil)
	p := &Provider{Provider: llm.NewProvider(d.name, kind), DeclRange: d.declRange, APIKeyEnvRange: d.declRange, Ranges: map[string]hcl.Range{}}
	l.exp.Providers[d.name] = p
	l.values.ns["provider"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(d.name), "kind": cty.StringVal(kind),
	})
	if !d.checked && a["kind"] != nil {
		l.checkProvider(d, kind, a["kind"])
	}
	k, ok := llm.LookupKind(kind)
	if !ok {
		return
	}
	for _, attr := range sortedAttrs(a) {
		s, ok := k.Setting(attr.Name)
		if !ok {
			continue // reported by checkProvider
		}
		v, ok := l.setting(a, s)
		if !ok {
			continue
		}
		rng := attr.Expr.Range()
		if s.Range != nil {
			if err := s.Range.Check(v); err != nil {
				l.errorf(&rng, "Invalid "+s.Name, "%s %s. Fix the value (%s).", s.Name, err, s.Doc)
				continue
			}
		}
		if path, ok := v.(string); ok && s.Path && path != "" {
			// As a dataset's path: relative to the experiment file, a
			// regular file the run can read, checked now rather than when
			// the first call opens the provider.
			abs, err := l.readablePath(path)
			if err != nil {
				l.errorf(&rng, "Invalid "+s.Name, "%s: %s. Fix the path or add the file.", s.Name, err)
				continue
			}
			v = abs
		}
		if s.Check != nil {
			if err := s.Check(v); err != nil {
				l.errorf(&rng, "Invalid "+s.Name, "%s %s. Fix the value (%s).", s.Name, err, s.Doc)
				continue
			}
		}
		if err := p.Set(s.Name, v); err != nil {
			l.errorf(&rng, "Invalid "+s.Name, "%s.", err)
			continue
		}
		p.Ranges[s.Name] = rng
	}
	if r, ok := p.Ranges["api_key_env"]; ok {
		p.APIKeyEnvRange = r
	}
	if errorCount(l.diags) > before {
		return // a setting it may be identified by is wrong, and reported
	}
	for _, s := range k.Settings {
		if _, set := a[s.Name]; s.Required && !set {
			return // reported by checkProvider; it cannot be identified without it
		}
	}
	who, err := p.Identify()
	if err != nil {
		rng, fix := d.declRange, "the provider block"
		for _, name := range []string{"endpoint_identity", "path", "base_url"} {
			if r, ok := p.Ranges[name]; ok {
				rng, fix = r, name
				break
			}
		}
		l.errorf(&rng, "Cannot tell who answers provider."+d.name,
			"%s. Answers are cached by who gives them (a corpus by its file's contents, an endpoint by its URL), so the provider must be identified before anything is planned: fix %s.", err, fix)
		return
	}
	p.Answerer = who
}

// setting evaluates a setting's attribute as its declared type.
func (l *loader) setting(attrs hcl.Attributes, s llm.Setting) (any, bool) {
	switch s.Type {
	case llm.TypeString:
		return l.str(attrs, s.Name, nil)
	case llm.TypeInt:
		return l.int(attrs, s.Name, nil)
	case llm.TypeNumber:
		return l.float(attrs, s.Name, nil)
	case llm.TypeBool:
		return l.boolean(attrs, s.Name, nil)
	case llm.TypeStringMap:
		m := l.stringMap(attrs, s.Name)
		return m, m != nil
	}
	panic(fmt.Sprintf("config: setting %s has unknown type %q", s.Name, s.Type))
}

// MissingKeys returns one diagnostic per secret environment variable that a
// provider in use names (a setting its kind flags SecretEnv) and that is
// unset; the engine calls it before any call is made.
func (e *Experiment) MissingKeys(providers []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range providers {
		p := e.Providers[name]
		if p == nil {
			continue
		}
		k, _ := llm.LookupKind(p.Kind)
		for _, s := range k.Settings {
			if !s.SecretEnv {
				continue
			}
			v, _ := p.Get(s.Name)
			what := strings.TrimPrefix(strings.TrimPrefix(s.Holds, "the "), "a ")
			rng, ok := p.Ranges[s.Name]
			if !ok {
				rng = p.DeclRange
			}
			missing := func(envName, holds string) {
				if envName == "" || os.Getenv(envName) != "" {
					return
				}
				r := rng
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Missing " + what,
					Detail: fmt.Sprintf("Provider %q reads %s from the environment variable %s, which is not set. Export it (export %s=...) before running; secrets are never written to files, cache or logs.",
						name, holds, envName, envName),
					Subject: &r,
				})
			}
			switch v := v.(type) {
			case string:
				missing(v, s.Holds)
			case map[string]string:
				headers := make([]string, 0, len(v))
				for h := range v {
					headers = append(headers, h)
				}
				sort.Strings(headers)
				for _, h := range headers {
					missing(v[h], fmt.Sprintf("%s (%s)", s.Holds, h))
				}
			}
		}
	}
	return diags
}

// LLMProviders returns the llm.Provider of every provider block.
func (e *Experiment) LLMProviders() map[string]llm.Provider {
	out := map[string]llm.Provider{}
	for n, p := range e.Providers {
		out[n] = p.Provider
	}
	return out
}
