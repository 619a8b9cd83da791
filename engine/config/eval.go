package config

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/gocty"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// refAttr marks an object that stands for a block or stage instance, so a
// param expecting a reference can find what it points at after any amount of
// expression plumbing (for expressions, locals, for_each values).
const refAttr = "__ref"

// values holds what each namespace evaluates to so far.
type values struct {
	ns    map[string]map[string]cty.Value // var, local, provider, model, dataset, quality
	stage map[string]map[string]cty.Value // type -> name -> value
	funcs map[string]function.Function
}

func (v *values) context(each map[string]cty.Value) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for ns, m := range v.ns {
		vars[ns] = objectOrEmpty(m)
	}
	st := map[string]cty.Value{}
	for t, m := range v.stage {
		st[t] = objectOrEmpty(m)
	}
	vars["stage"] = objectOrEmpty(st)
	if each != nil {
		vars["each"] = cty.ObjectVal(each)
	}
	return &hcl.EvalContext{Variables: vars, Functions: v.funcs}
}

func objectOrEmpty(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return emptyObject
	}
	return cty.ObjectVal(m)
}

func (l *loader) load(files []parsedFile) {
	// Reference analysis runs even when decoding found errors, so one pass
	// reports unknown attributes and undeclared references together.
	l.collect(files)
	l.analyse()
	if l.diags.HasErrors() {
		return
	}
	l.values = &values{
		ns: map[string]map[string]cty.Value{
			"var": {}, "local": {}, "provider": {}, "model": {}, "dataset": {}, "quality": {},
		},
		stage: map[string]map[string]cty.Value{},
		funcs: functions(l.exp.Dir),
	}
	l.exp.Variables = map[string]cty.Value{}
	l.exp.Providers = map[string]*Provider{}
	l.exp.Models = map[string]*stages.Model{}
	l.exp.Datasets = map[string]*Dataset{}
	l.exp.Qualities = map[string]*stages.Quality{}
	overrides := l.variableOverrides()
	for _, d := range l.sorted {
		switch d.kind {
		case "variable":
			l.evalVariable(d, overrides)
		case "local":
			v, diags := d.attr.Expr.Value(l.values.context(nil))
			l.diags = append(l.diags, diags...)
			l.values.ns["local"][d.name] = v
		case "provider":
			l.evalProvider(d)
		case "model":
			l.evalModel(d)
		case "dataset":
			l.evalDataset(d)
		case "quality":
			l.evalQuality(d)
		case "stage", "report":
			l.expandStage(d)
		}
	}
	l.checkProviderUse()
}

// eval evaluates one attribute, or returns null when it is absent.
func (l *loader) eval(attrs hcl.Attributes, name string, each map[string]cty.Value) (cty.Value, *hcl.Attribute) {
	a, ok := attrs[name]
	if !ok {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	v, diags := a.Expr.Value(l.values.context(each))
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	return v, a
}

func (l *loader) typeError(a *hcl.Attribute, want, example string, got cty.Value) {
	gotName := "null"
	if !got.IsNull() {
		gotName = got.Type().FriendlyName()
	}
	l.errorf(a.Expr.Range().Ptr(), fmt.Sprintf("Wrong type for %s", a.Name),
		"%s must be %s, got %s. For example: %s = %s.", a.Name, want, gotName, a.Name, example)
}

// Typed getters: each reports a clear error on a wrong type and returns ok=false.
func (l *loader) str(attrs hcl.Attributes, name string, each map[string]cty.Value) (string, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return "", false
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil || !s.IsKnown() {
		l.typeError(a, "a string", `"text"`, v)
		return "", false
	}
	return s.AsString(), true
}

func (l *loader) num(attrs hcl.Attributes, name string, each map[string]cty.Value) (*big.Float, *hcl.Attribute) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return nil, nil
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil || !n.IsKnown() {
		l.typeError(a, "a number", "3", v)
		return nil, nil
	}
	return n.AsBigFloat(), a
}

func (l *loader) float(attrs hcl.Attributes, name string, each map[string]cty.Value) (float64, bool) {
	n, _ := l.num(attrs, name, each)
	if n == nil {
		return 0, false
	}
	f, _ := n.Float64()
	return f, true
}

func (l *loader) int(attrs hcl.Attributes, name string, each map[string]cty.Value) (int, bool) {
	n, a := l.num(attrs, name, each)
	if n == nil {
		return 0, false
	}
	if !n.IsInt() {
		l.errorf(a.Expr.Range().Ptr(), fmt.Sprintf("Wrong type for %s", name),
			"%s must be a whole number, got %s. For example: %s = 3.", name, n.Text('g', 10), name)
		return 0, false
	}
	i, _ := n.Int64()
	return int(i), true
}

func (l *loader) boolean(attrs hcl.Attributes, name string, each map[string]cty.Value) (bool, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return false, false
	}
	b, err := convert.Convert(v, cty.Bool)
	if err != nil {
		l.typeError(a, "true or false", "true", v)
		return false, false
	}
	return b.True(), true
}

func (l *loader) strings(attrs hcl.Attributes, name string, each map[string]cty.Value) ([]string, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return nil, false
	}
	lv, err := convert.Convert(v, cty.List(cty.String))
	if err != nil {
		l.typeError(a, "a list of strings", `["a", "b"]`, v)
		return nil, false
	}
	var out []string
	if err := gocty.FromCtyValue(lv, &out); err != nil {
		l.typeError(a, "a list of strings", `["a", "b"]`, v)
		return nil, false
	}
	return out, true
}

func (l *loader) stringMap(attrs hcl.Attributes, name string) map[string]string {
	v, a := l.eval(attrs, name, nil)
	if a == nil || v.IsNull() {
		return nil
	}
	mv, err := convert.Convert(v, cty.Map(cty.String))
	if err != nil {
		l.typeError(a, "a map of strings", `{ "X-Name" = "value" }`, v)
		return nil
	}
	out := map[string]string{}
	_ = gocty.FromCtyValue(mv, &out)
	return out
}

// variableOverrides reads -var-file files then -var flags; later wins.
func (l *loader) variableOverrides() map[string]cty.Value {
	out := map[string]cty.Value{}
	for _, f := range l.opts.VarFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			l.errorf(nil, "Cannot read variables file", "%s. Check the -var-file path.", err)
			continue
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		attrs, diags := file.Body.JustAttributes()
		l.diags = append(l.diags, diags...)
		for _, a := range sortedAttrs(attrs) {
			if _, declared := l.decls["var."+a.Name]; !declared {
				l.errorf(a.NameRange.Ptr(), fmt.Sprintf("Undeclared variable %q", a.Name),
					"The variables file sets %q but the experiment declares no variable of that name. Add variable %q {} or remove the line.", a.Name, a.Name)
				continue
			}
			v, diags := a.Expr.Value(&hcl.EvalContext{Functions: l.valuesFuncs()})
			l.diags = append(l.diags, diags...)
			out[a.Name] = v
		}
	}
	for _, kv := range l.opts.Vars {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			l.errorf(nil, "Malformed -var", "%q is not NAME=VALUE. Write it like -var n=5.", kv)
			continue
		}
		d, declared := l.decls["var."+name]
		if !declared {
			l.errorf(nil, fmt.Sprintf("Undeclared variable %q", name),
				"-var sets %q but the experiment declares no variable of that name. Declare it with variable %q {} or fix the name.", name, name)
			continue
		}
		out[name] = parseVarValue(raw, d)
	}
	return out
}

func (l *loader) valuesFuncs() map[string]function.Function { return functions(l.exp.Dir) }

// parseVarValue reads a -var value as an HCL literal (5, true, ["a"]) unless the
// variable is declared as a string, falling back to the raw string.
func parseVarValue(raw string, d *decl) cty.Value {
	if d.content != nil {
		if te, ok := d.content.Attributes["type"]; ok {
			if ty, diags := typeexpr.TypeConstraint(te.Expr); !diags.HasErrors() && ty == cty.String {
				return cty.StringVal(raw)
			}
		}
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), "-var", hcl.InitialPos)
	if !diags.HasErrors() {
		if v, diags := expr.Value(nil); !diags.HasErrors() {
			return v
		}
	}
	return cty.StringVal(raw)
}

func (l *loader) evalVariable(d *decl, overrides map[string]cty.Value) {
	attrs := d.content.Attributes
	v, given := overrides[d.name]
	if !given {
		if a, ok := attrs["default"]; ok {
			var diags hcl.Diagnostics
			v, diags = a.Expr.Value(&hcl.EvalContext{Functions: l.values.funcs})
			l.diags = append(l.diags, diags...)
		} else {
			l.errorf(d.declRange.Ptr(), fmt.Sprintf("No value for variable %q", d.name),
				"Variable %q has no default. Give one with -var %s=VALUE, in a -var-file, or add default = ... to the block.", d.name, d.name)
			v = cty.DynamicVal
		}
	}
	if a, ok := attrs["type"]; ok {
		ty, diags := typeexpr.TypeConstraint(a.Expr)
		l.diags = append(l.diags, diags...)
		if !diags.HasErrors() && v.IsKnown() {
			cv, err := convert.Convert(v, ty)
			if err != nil {
				l.errorf(d.declRange.Ptr(), fmt.Sprintf("Wrong type for variable %q", d.name),
					"The value given for %q does not fit its type %s: %s. Give a value of that type.", d.name, typeexpr.TypeString(ty), err)
			} else {
				v = cv
			}
		}
	}
	l.values.ns["var"][d.name] = v
	l.exp.Variables[d.name] = v
}

func (l *loader) evalProvider(d *decl) {
	a := d.content.Attributes
	p := &Provider{DeclRange: d.declRange}
	p.Name = d.name
	p.Kind, _ = l.str(a, "kind", nil)
	switch p.Kind {
	case "openai", "mock":
	default:
		l.errorf(a["kind"].Expr.Range().Ptr(), fmt.Sprintf("Unknown provider kind %q", p.Kind),
			`kind must be "openai" (any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server...) or "mock" (offline, synthetic answers).`)
	}
	p.BaseURL, _ = l.str(a, "base_url", nil)
	p.APIKeyEnv, _ = l.str(a, "api_key_env", nil)
	if k, ok := a["api_key_env"]; ok {
		p.APIKeyEnvRange = k.Expr.Range()
	} else {
		p.APIKeyEnvRange = d.declRange
	}
	p.OrgEnv, _ = l.str(a, "org_env", nil)
	p.Headers = l.stringMap(a, "headers")
	p.HeaderEnv = l.stringMap(a, "header_env")
	if s, ok := l.int(a, "seed", nil); ok {
		p.Seed = int64(s)
	}
	p.MaxConcurrency, _ = l.int(a, "max_concurrency", nil)
	p.RequestsPerMinute, _ = l.float(a, "requests_per_minute", nil)
	p.TokensPerMinute, _ = l.float(a, "tokens_per_minute", nil)
	p.MaxRetries = -1
	if n, ok := l.int(a, "max_retries", nil); ok {
		p.MaxRetries = n
	}
	p.TimeoutSeconds, _ = l.float(a, "timeout_seconds", nil)
	p.RepairAttempts = -1
	if n, ok := l.int(a, "repair_attempts", nil); ok {
		p.RepairAttempts = n
	}
	if p.Kind == "openai" && p.APIKeyEnv == "" {
		l.errorf(d.declRange.Ptr(), "Missing api_key_env",
			`An openai provider reads its key from an environment variable; name it with api_key_env = "OPENAI_API_KEY" (use any variable name; for a local server without auth, set it to a variable holding any value).`)
	}
	l.exp.Providers[d.name] = p
	l.values.ns["provider"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(d.name), "kind": cty.StringVal(p.Kind),
	})
}

func (l *loader) evalModel(d *decl) {
	a := d.content.Attributes
	m := &stages.Model{Address: d.addr}
	if pv, pa := l.eval(a, "provider", nil); pa != nil {
		if addr, ok := refOf(pv); ok && strings.HasPrefix(addr, "provider.") {
			m.Provider = strings.TrimPrefix(addr, "provider.")
		} else {
			l.errorf(pa.Expr.Range().Ptr(), "Wrong type for provider", "provider must be a provider reference such as provider.openai.")
		}
	}
	m.Name, _ = l.str(a, "name", nil)
	m.Family, _ = l.str(a, "family", nil)
	if f, ok := l.float(a, "temperature", nil); ok {
		m.Temperature = &f
	}
	if f, ok := l.float(a, "top_p", nil); ok {
		m.TopP = &f
	}
	m.MaxTokens, _ = l.int(a, "max_tokens", nil)
	if s, ok := l.int(a, "seed", nil); ok {
		m.Seed = &s
	}
	m.Stop, _ = l.strings(a, "stop", nil)
	m.JSONMode, _ = l.boolean(a, "json_mode", nil)
	for _, pb := range d.content.Blocks {
		pc, _ := pb.Body.Content(priceSchema)
		if pc != nil {
			m.Price.InputPerMTok, _ = l.float(pc.Attributes, "input_per_mtok", nil)
			m.Price.OutputPerMTok, _ = l.float(pc.Attributes, "output_per_mtok", nil)
		}
	}
	l.exp.Models[d.name] = m
	optNum := func(p *float64) cty.Value {
		if p == nil {
			return cty.NullVal(cty.Number)
		}
		return cty.NumberFloatVal(*p)
	}
	l.values.ns["model"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr:       cty.StringVal(d.addr),
		"name":        cty.StringVal(m.Name),
		"family":      cty.StringVal(m.Family),
		"provider":    cty.StringVal(m.Provider),
		"temperature": optNum(m.Temperature),
		"max_tokens":  cty.NumberIntVal(int64(m.MaxTokens)),
	})
}

func (l *loader) evalDataset(d *decl) {
	a := d.content.Attributes
	ds := &Dataset{Name: d.name, DeclRange: d.declRange}
	ds.Format, _ = l.str(a, "format", nil)
	path, _ := l.str(a, "path", nil)
	if path != "" {
		ds.Path = path
		if !filepath.IsAbs(path) {
			ds.Path = filepath.Join(l.exp.Dir, path)
		}
		if _, err := os.Stat(ds.Path); err != nil {
			l.errorf(a["path"].Expr.Range().Ptr(), "Dataset file not found",
				"No file exists at %q (paths are relative to the experiment folder). Fix the path or add the file.", path)
		}
	}
	ds.IDField, _ = l.str(a, "id_field", nil)
	ds.Limit, _ = l.int(a, "limit", nil)
	l.exp.Datasets[d.name] = ds
	l.values.ns["dataset"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(d.name),
	})
}

func (l *loader) evalQuality(d *decl) {
	a := d.content.Attributes
	q := &stages.Quality{Address: d.addr, Name: d.name}
	if n, ok := l.str(a, "name", nil); ok {
		q.Name = n
	}
	q.Definition, _ = l.str(a, "definition", nil)
	if strings.TrimSpace(q.Definition) == "" && a["definition"] != nil {
		l.errorf(a["definition"].Expr.Range().Ptr(), "Empty quality definition",
			"A quality indicator needs a definition the judge can apply, e.g. definition = \"developing new methodologies ...\".")
	}
	l.exp.Qualities[d.name] = q
	l.values.ns["quality"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(q.Name), "definition": cty.StringVal(q.Definition),
	})
}

// checkProviderUse reports models whose provider does not exist in this experiment.
func (l *loader) checkProviderUse() {
	names := make([]string, 0, len(l.exp.Models))
	for n := range l.exp.Models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := l.exp.Models[n]
		if m.Provider == "" {
			continue
		}
		if _, ok := l.exp.Providers[m.Provider]; !ok {
			r := l.decls["model."+n].declRange
			l.errorf(&r, "Unknown provider", "model.%s uses provider %q, which is not declared. Add a provider %q block.", n, m.Provider, m.Provider)
		}
	}
}

// refOf returns the address an object value stands for.
func refOf(v cty.Value) (string, bool) {
	if v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() || !v.Type().HasAttribute(refAttr) {
		return "", false
	}
	r := v.GetAttr(refAttr)
	if r.IsNull() || r.Type() != cty.String {
		return "", false
	}
	return r.AsString(), true
}

// MissingKeys returns one diagnostic per openai provider in use whose API key
// variable is unset; the engine calls it before any call is made.
func (e *Experiment) MissingKeys(providers []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range providers {
		p := e.Providers[name]
		if p == nil || p.Kind != "openai" {
			continue
		}
		if os.Getenv(p.APIKeyEnv) == "" {
			r := p.APIKeyEnvRange
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Missing API key",
				Detail: fmt.Sprintf("Provider %q reads its API key from the environment variable %s, which is not set. Export it (export %s=...) before running; the key is never written to files, cache or logs.",
					name, p.APIKeyEnv, p.APIKeyEnv),
				Subject: &r,
			})
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
