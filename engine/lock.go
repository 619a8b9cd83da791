package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// A Lock is what an experiment's results rest on, written by run beside the
// experiment (ideaflow.lock) to be committed: which models actually
// answered (as the records say, never as the configuration asks), and the
// digests of the prompts, datasets and variable values, and of each stage
// instance's keys. A later plan compares the lock with what the cache and the
// files hold now and names what drifted, so a re-run months later says
// "served model changed" instead of silently reporting other numbers.
//
// Its text is deterministic (sorted, no times, no paths outside the
// experiment folder): equal results give byte-identical locks, and a diff of
// the committed lock is a diff of what the results rest on.
type Lock struct {
	Experiment string `json:"experiment"`
	// Models lists, per provider and requested model name, the served model
	// names and system fingerprints of the answers the results rest on.
	Models []LockModel `json:"models,omitempty"`
	// Prompts maps a stage instance address to the digest of its prompt
	// params (those named *prompt* or *template*).
	Prompts map[string]string `json:"prompts,omitempty"`
	// Datasets maps a dataset file, relative to the experiment folder, to
	// the SHA-256 of its bytes.
	Datasets map[string]string `json:"datasets,omitempty"`
	// Variables maps a variable name to the SHA-256 of its value as records
	// show it (a value holding a secret is withheld before it is digested).
	Variables map[string]string `json:"variables,omitempty"`
	// Stages maps a stage instance address to the digest of its nodes' keys.
	Stages map[string]LockStage `json:"stages,omitempty"`
}

// LockModel is who answered one requested model of one provider.
type LockModel struct {
	Provider     string   `json:"provider"`
	Requested    string   `json:"requested"`
	Served       []string `json:"served,omitempty"`
	Fingerprints []string `json:"fingerprints,omitempty"`
}

// LockStage is a stage instance's key set.
type LockStage struct {
	Nodes  int    `json:"nodes"`
	KeySet string `json:"key_set"`
}

// lockHeader opens every lock file; ReadLock skips the lines starting "#".
const lockHeader = "# ideaflow.lock: written by `ideaflow run`; commit it beside the experiment.\n" +
	"# `ideaflow plan` names what drifted from it: served models, fingerprints, prompts, datasets, variables.\n"

// LockPath is the lock's file name for an experiment loaded from path (a
// folder: ideaflow.lock in it; one file: <stem>.ideaflow.lock beside it, so
// two one-file experiments of a folder keep their own locks).
func LockPath(expPath string) string {
	if fi, err := os.Stat(expPath); err == nil && !fi.IsDir() {
		stem := strings.TrimSuffix(filepath.Base(expPath), filepath.Ext(expPath))
		return filepath.Join(filepath.Dir(expPath), stem+".ideaflow.lock")
	}
	return filepath.Join(expPath, "ideaflow.lock")
}

// Marshal is the lock's text: the header, then indented JSON with sorted keys.
func (l *Lock) Marshal() []byte {
	b, _ := json.MarshalIndent(l, "", "  ")
	return append(append([]byte(lockHeader), b...), '\n')
}

// ReadLock reads a lock file; a missing file is (nil, nil).
func ReadLock(path string) (*Lock, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	var body bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			body.Write(line)
		}
	}
	var l Lock
	if err := json.Unmarshal(body.Bytes(), &l); err != nil {
		return nil, fmt.Errorf("read lock %s: %w", path, err)
	}
	return &l, nil
}

// LockOf is the lock of what the plan found: the cached records' models,
// the files' and variables' digests, every instance's key set.
func (e *Engine) LockOf(p *Plan, vars map[string]string) *Lock {
	return lockOf(p.g, p.states, vars)
}

// lockOf builds the lock from the states of a plan or a run. Models are read
// from the records of the call nodes settled (cached or ran): what answered.
func lockOf(g *Graph, states []nodeState, vars map[string]string) *Lock {
	l := &Lock{Experiment: g.Exp.Name, Prompts: map[string]string{}, Datasets: map[string]string{},
		Variables: map[string]string{}, Stages: map[string]LockStage{}}
	type modelKey struct{ provider, requested string }
	served := map[modelKey]map[string]bool{}
	fps := map[modelKey]map[string]bool{}
	keys := map[*Instance][]string{}
	for i, n := range g.Nodes {
		if i >= len(states) || n.Inst.source {
			continue
		}
		st := &states[i]
		if st.key != "" {
			keys[n.Inst] = append(keys[n.Inst], st.key)
		}
		if !st.isCall || st.key == "" || (st.status != StatusCached && st.status != StatusRan) || st.wantModel == "" {
			continue
		}
		// What answered, as the node's record says: the walk read the
		// served model and fingerprint from the record or from the memo
		// written with it, so no record is read again here (reading one
		// per call tripled a warm run at 96k nodes).
		prov := st.provider
		if prov == "" && n.Inst.model != nil {
			prov = n.Inst.model.Provider
		}
		k := modelKey{prov, st.wantModel}
		if served[k] == nil {
			served[k], fps[k] = map[string]bool{}, map[string]bool{}
		}
		if st.servedModel != "" {
			served[k][st.servedModel] = true
		}
		if st.fingerprint != "" {
			fps[k][st.fingerprint] = true
		}
	}
	for k := range served {
		l.Models = append(l.Models, LockModel{Provider: k.provider, Requested: k.requested,
			Served: slices.Sorted(maps.Keys(served[k])), Fingerprints: slices.Sorted(maps.Keys(fps[k]))})
	}
	slices.SortFunc(l.Models, func(a, b LockModel) int {
		if c := strings.Compare(a.Provider, b.Provider); c != 0 {
			return c
		}
		return strings.Compare(a.Requested, b.Requested)
	})
	// Each instance's key set is sorted and digested on its own, so they
	// are done in parallel: at 1M nodes (21 instances) sorting the keys was
	// a second of a warm run's CPU.
	sets := make([]LockStage, len(g.Instances))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range min(runtime.GOMAXPROCS(0), len(g.Instances)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(g.Instances) {
					return
				}
				if inst := g.Instances[i]; !inst.source {
					sets[i] = keySet(keys[inst])
				}
			}
		})
	}
	wg.Wait()
	for i, inst := range g.Instances {
		if inst.source {
			continue
		}
		l.Stages[inst.Address] = sets[i]
		if d := promptDigest(inst); d != "" {
			l.Prompts[inst.Address] = d
		}
	}
	for _, ds := range g.Exp.Datasets {
		rel := ds.Path
		if r, err := filepath.Rel(g.Exp.Dir, ds.Path); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
		if d, err := fileDigest(ds.Path); err == nil {
			l.Datasets[rel] = d
		}
	}
	for name, v := range vars {
		sum := sha256.Sum256([]byte(v))
		l.Variables[name] = "sha256:" + hex.EncodeToString(sum[:])
	}
	return l
}

// keySet is an instance's entry in a lock: its node count and the digest of
// its sorted keys.
func keySet(keys []string) LockStage {
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return LockStage{Nodes: len(keys), KeySet: "sha256:" + hex.EncodeToString(h.Sum(nil))}
}

// promptDigest digests an instance's prompt params: the string params whose
// name says prompt or template, in name order. "" when it has none.
func promptDigest(inst *Instance) string {
	h := sha256.New()
	found := false
	for _, name := range slices.Sorted(maps.Keys(inst.Params)) {
		lower := strings.ToLower(name)
		if !strings.Contains(lower, "prompt") && !strings.Contains(lower, "template") {
			continue
		}
		s, ok := inst.Params[name].(string)
		if !ok {
			continue
		}
		found = true
		fmt.Fprintf(h, "%s\x00%d\x00%s", name, len(s), s)
	}
	if !found {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// fileDigest is the SHA-256 of a file's bytes, or of a folder's files (by
// relative path, in order).
func fileDigest(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if !fi.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		h.Write(b)
		return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "%s\x00%x\n", filepath.ToSlash(rel), sum)
		return nil
	})
	if err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Drift names, in words, what changed from the committed lock old to the
// current lock cur: served models and fingerprints (only for models cur has
// answers of: a model not cached yet has not drifted), prompts, datasets,
// variables and key sets, in that order; empty when nothing drifted.
func Drift(old, cur *Lock) []string {
	if old == nil || cur == nil {
		return nil
	}
	var out []string
	oldModels := map[string]LockModel{}
	for _, m := range old.Models {
		oldModels[m.Provider+"\x00"+m.Requested] = m
	}
	for _, m := range cur.Models {
		o, ok := oldModels[m.Provider+"\x00"+m.Requested]
		if !ok {
			continue
		}
		if !slices.Equal(o.Served, m.Served) && len(m.Served) > 0 {
			out = append(out, fmt.Sprintf("served model changed: %s -> %s (provider %s, model %s)",
				setText(o.Served), setText(m.Served), m.Provider, m.Requested))
		}
		if !slices.Equal(o.Fingerprints, m.Fingerprints) && len(m.Fingerprints) > 0 {
			out = append(out, fmt.Sprintf("fingerprint changed: %s -> %s (provider %s, model %s)",
				setText(o.Fingerprints), setText(m.Fingerprints), m.Provider, m.Requested))
		}
	}
	for _, addr := range slices.Sorted(maps.Keys(old.Prompts)) {
		if d, ok := cur.Prompts[addr]; ok && d != old.Prompts[addr] {
			out = append(out, "prompt changed: "+addr)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(old.Datasets)) {
		d, ok := cur.Datasets[path]
		switch {
		case !ok:
			out = append(out, "dataset no longer read: "+path)
		case d != old.Datasets[path]:
			out = append(out, "dataset digest changed: "+path)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(cur.Datasets)) {
		if _, ok := old.Datasets[path]; !ok {
			out = append(out, "dataset new since the lock: "+path)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(old.Variables)) {
		if d, ok := cur.Variables[name]; ok && d != old.Variables[name] {
			out = append(out, "variable changed: "+name)
		}
	}
	for _, addr := range slices.Sorted(maps.Keys(old.Stages)) {
		if s, ok := cur.Stages[addr]; ok && s != old.Stages[addr] {
			out = append(out, fmt.Sprintf("stage keys changed: %s (%d -> %d nodes)", addr, old.Stages[addr].Nodes, s.Nodes))
		}
	}
	return out
}

func setText(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
