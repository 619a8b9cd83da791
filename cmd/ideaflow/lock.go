package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ideaflow/ideaflow/engine"
)

// lockWriter is run's hook for the lock (engine/lock.go): it says what
// drifted from the committed lock, then writes the new one beside the
// experiment, unchanged bytes left alone so its modification time says when
// the results last moved. A run with --out leaves the experiment folder as
// it is: it says the drift but writes no lock (a run elsewhere, a test, a
// try-out, is not the one to commit).
func (a *app) lockWriter(g *engine.Graph, outDir string) func(*engine.Lock) {
	path := engine.LockPath(g.Exp.Path)
	return func(l *engine.Lock) {
		old, err := engine.ReadLock(path)
		if err != nil {
			fmt.Fprintf(a.stderr, "warning: %v (it is rewritten)\n", err)
		}
		for _, d := range engine.Drift(old, l) {
			fmt.Fprintf(a.stdout, "lock: %s\n", d)
		}
		if outDir != "" {
			return
		}
		b := l.Marshal()
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, b) {
			return
		}
		if err := writeFileAtomic(path, b); err != nil {
			fmt.Fprintf(a.stderr, "warning: %s not written: %v\n", filepath.Base(path), err)
			return
		}
		fmt.Fprintf(a.stdout, "wrote %s (commit it: plan names what drifts from it)\n", path)
	}
}

// printLockDrift is plan's comparison of the committed lock with what the
// cache and the files hold now.
func printLockDrift(w io.Writer, e *engine.Engine, p *engine.Plan, g *engine.Graph) {
	path := engine.LockPath(g.Exp.Path)
	drift, found, err := lockDrift(e, p, g)
	if err != nil {
		fmt.Fprintf(w, "\nLock: %v\n", err)
		return
	}
	if !found {
		return
	}
	if len(drift) == 0 {
		fmt.Fprintf(w, "\nLock: no drift from %s.\n", filepath.Base(path))
		return
	}
	fmt.Fprintf(w, "\nLock drift from %s:\n", filepath.Base(path))
	for _, d := range drift {
		fmt.Fprintf(w, "  %s\n", d)
	}
}

// lockDrift compares the plan with the committed lock: found is false when
// there is none.
func lockDrift(e *engine.Engine, p *engine.Plan, g *engine.Graph) (drift []string, found bool, err error) {
	old, err := engine.ReadLock(engine.LockPath(g.Exp.Path))
	if err != nil || old == nil {
		return nil, false, err
	}
	return engine.Drift(old, e.LockOf(p, variableStrings(g))), true, nil
}

// planJSON is `plan --json`: the plan's summary and, when a lock is
// committed beside the experiment, what drifted from it ([] for nothing).
type planJSON struct {
	*engine.PlanSummary
	Lock *lockJSON `json:"lock,omitempty"` // absent: no lock beside the experiment
}

type lockJSON struct {
	File  string   `json:"file"`
	Drift []string `json:"drift"` // [] when nothing drifted
	Error string   `json:"error,omitempty"`
}

// writeFileAtomic writes b to path through a temporary file in its folder.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
