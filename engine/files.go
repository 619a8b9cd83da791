package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/stages"
)

// Provenance says what produced a report, so a table pasted into a paper
// can be traced back: the ideaflow version, the experiment's files' digest,
// the variables, the models asked and the models that answered, and the
// datasets' digests. It is written beside each report (NAME.provenance.json,
// with the time and the build) and, without either, as a footer of Markdown
// and LaTeX files, so the same results give byte-identical tables.
type Provenance struct {
	Ideaflow         string            `json:"ideaflow"`
	Experiment       string            `json:"experiment"`
	ExperimentDigest string            `json:"experiment_digest"`
	GitCommit        string            `json:"git_commit,omitempty"`
	Variables        map[string]string `json:"variables,omitempty"`
	// Models maps each requested model name to the names the endpoint said
	// answered (with counts), cached and new answers alike: of the calls
	// the report rests on.
	Models map[string]map[string]int `json:"models,omitempty"`
	// Answered says who answered those calls (class, identity, and per
	// answerer the models asked and the models that answered), as their
	// records say.
	Answered []AnsweredBy      `json:"answered,omitempty"`
	Datasets map[string]string `json:"datasets,omitempty"` // name -> sha256 of its items
	// Dropped counts, per stage that dropped items, the items it left out by
	// reason (a target with too few references).
	Dropped map[string]map[string]int `json:"dropped,omitempty"`
	// Synthetic says the report rests on an answer of the mock, as the
	// records say (a partly synthetic table marks which cells).
	Synthetic bool      `json:"synthetic,omitempty"`
	Partial   bool      `json:"partial,omitempty"`
	Written   time.Time `json:"written"`
}

func provenanceOf(g *Graph, sum *Summary, opts RunOptions) *Provenance {
	p := &Provenance{
		Ideaflow: opts.Version, Experiment: g.Exp.Name, ExperimentDigest: g.Exp.Source, GitCommit: opts.GitCommit,
		Variables: opts.Variables, Models: sum.ServedModels, Answered: sum.Answered, Datasets: map[string]string{}, Synthetic: sum.Synthetic,
		Written: time.Now().UTC(),
	}
	if p.Ideaflow == "" {
		p.Ideaflow = "dev"
	}
	for addr, st := range sum.Stages {
		for why, n := range st.DropReasons {
			if why == "dropped upstream" {
				continue
			}
			if p.Dropped == nil {
				p.Dropped = map[string]map[string]int{}
			}
			if p.Dropped[addr] == nil {
				p.Dropped[addr] = map[string]int{}
			}
			p.Dropped[addr][why] = n
		}
	}
	for _, inst := range g.Instances {
		if !inst.source {
			continue
		}
		h := sha256.New()
		for _, i := range inst.nodes {
			d := g.Nodes[i].outputDigest
			h.Write(d[:])
		}
		p.Datasets[strings.TrimPrefix(inst.Address, "dataset.")] = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return p
}

// footer renders provenance as lines for a text report, each line started
// by prefix (a comment marker where the format needs one).
func (p *Provenance) footer(prefix string) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		b.WriteString(prefix)
		fmt.Fprintf(&b, format, args...)
		b.WriteString("\n")
	}
	// The build is not named here, only in the .provenance.json: what
	// decides a table's values is in its key material (stage type versions
	// among it), so the same results give the same bytes whichever build,
	// or way of building (make build stamps a version, go build none),
	// rendered them.
	line("Produced by ideaflow from experiment %s (files sha256:%s%s); the build and details are in the .provenance.json beside this file.", p.Experiment, prefix12(p.ExperimentDigest), gitNote(p.GitCommit))
	if len(p.Variables) > 0 {
		line("Variables: %s.", joinSorted(p.Variables, func(k, v string) string { return k + " = " + v }))
	}
	if len(p.Models) > 0 {
		var ms []string
		for _, req := range slices.Sorted(maps.Keys(p.Models)) {
			served := p.Models[req]
			if len(served) == 1 && served[req] > 0 {
				ms = append(ms, req)
				continue
			}
			ms = append(ms, req+" (answered by "+strings.Join(slices.Sorted(maps.Keys(served)), ", ")+")")
		}
		line("Models: %s.", strings.Join(ms, "; "))
	}
	if len(p.Answered) > 0 {
		var as []string
		for _, a := range p.Answered {
			who := fmt.Sprintf("%s (%d node(s))", a.Name(), a.Nodes)
			if a.Synthetic {
				who += ", SYNTHETIC"
			}
			as = append(as, who)
		}
		line("Answered by: %s.", strings.Join(as, "; "))
	}
	if len(p.Datasets) > 0 {
		line("Datasets: %s.", joinSorted(p.Datasets, func(k, v string) string { return k + " sha256:" + prefix12(strings.TrimPrefix(v, "sha256:")) }))
	}
	for _, stage := range slices.Sorted(maps.Keys(p.Dropped)) {
		var rs []string
		for _, why := range slices.Sorted(maps.Keys(p.Dropped[stage])) {
			rs = append(rs, fmt.Sprintf("%d item(s): %s", p.Dropped[stage][why], why))
		}
		line("Dropped by %s: %s.", stage, strings.Join(rs, "; "))
	}
	return b.String()
}

func gitNote(commit string) string {
	if commit == "" {
		return ""
	}
	return ", git " + prefix12(commit)
}

// prefix12 is the first 12 hex digits of a digest: enough to tell, short
// enough for a footnote.
func prefix12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func joinSorted(m map[string]string, f func(k, v string) string) string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, f(k, m[k]))
	}
	return strings.Join(out, ", ")
}

// writeReports writes the files of every node that writes files, with
// their provenance.
func (w *walker) writeReports(dir string, prov *Provenance) ([]string, error) {
	g, states := w.g, w.states
	if dir == "" {
		dir = g.Exp.ResultsDir
	}
	var paths []string
	for i, n := range g.Nodes {
		if !n.Spec.WritesFiles || !states[i].known {
			continue
		}
		// A report whose inputs this run did not complete (interrupted, out
		// of budget, stopped) never replaces a complete one: it is written
		// beside it, marked partial.
		partial := w.incomplete(int32(i))
		var out stages.Files
		raw, err := w.outputOf(int32(i))
		if err != nil {
			return paths, fmt.Errorf("read %s output: %w", n.Inst.Address, err)
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return paths, fmt.Errorf("decode %s output: %w", n.Inst.Address, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return paths, fmt.Errorf("create report folder: %w", err)
		}
		for name, b := range out.Binary {
			if _, clash := out.Files[name]; clash {
				return paths, fmt.Errorf("%s output names %s twice (as text and as binary)", n.Inst.Address, name)
			}
			if out.Files == nil {
				out.Files = map[string]string{}
			}
			out.Files[name] = string(b) // written byte for byte below
		}
		names := slices.Sorted(maps.Keys(out.Files))
		p := *prov
		p.Partial = partial
		// What this report rests on, not the whole run: its own inputs'
		// records, transitively.
		p.Synthetic = states[i].prov.synthetic()
		p.Answered, p.Models = w.answeredUpstream(int32(i))
		stems := map[string]bool{}
		for _, name := range names {
			base := filepath.Base(name)
			ext := filepath.Ext(base)
			stem := strings.TrimSuffix(base, ext)
			if partial {
				stem += ".partial"
			} else {
				// A complete report supersedes a partial one left by an earlier run.
				_ = os.Remove(filepath.Join(dir, stem+".partial"+ext))
				_ = os.Remove(filepath.Join(dir, stem+".partial.provenance.json"))
			}
			stems[stem] = true
			path := filepath.Join(dir, stem+ext)
			content := out.Files[name]
			switch ext {
			case ".md":
				content += "\n---\n\n" + p.footer("")
			case ".tex":
				content += "\n" + p.footer("% ")
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				return paths, fmt.Errorf("write report %s: %w", path, err)
			}
			paths = append(paths, path)
		}
		for _, stem := range slices.Sorted(maps.Keys(stems)) {
			b, _ := json.MarshalIndent(&p, "", "  ")
			path := filepath.Join(dir, stem+".provenance.json")
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				return paths, fmt.Errorf("write provenance %s: %w", path, err)
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// answeredUpstream tallies who answered the model and service nodes node i
// rests on, directly or not, and the models asked and served among them.
func (w *walker) answeredUpstream(i int32) ([]AnsweredBy, map[string]map[string]int) {
	tally := answeredTally{}
	served := map[string]map[string]int{}
	seen := map[int32]bool{i: true}
	stack := []int32{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range w.g.Nodes[j].Deps {
			if seen[d] {
				continue
			}
			seen[d] = true
			st := &w.states[d]
			tally.add(st)
			if st.isCall && st.known && st.servedModel != "" {
				m := served[st.wantModel]
				if m == nil {
					m = map[string]int{}
					served[st.wantModel] = m
				}
				m[st.servedModel]++
			}
			stack = append(stack, d)
		}
	}
	if len(served) == 0 {
		served = nil
	}
	return tally.list(), served
}
