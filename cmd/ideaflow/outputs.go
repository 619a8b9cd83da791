package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkOutputs makes sure the run can write its outputs before the first
// model call is paid for: a typo in --summary-json used to surface only
// after the whole run, its summary lost. reportDir is --out ("" for the
// default under the experiment, which the engine creates), summaryJSON is
// --summary-json ("" for none). Neither is left behind as a side effect,
// except that reportDir is created, as the run would create it.
func checkOutputs(reportDir, summaryJSON string) error {
	if reportDir != "" {
		if err := os.MkdirAll(reportDir, 0o755); err != nil {
			return fmt.Errorf("--out %s: cannot create the folder: %v; give a folder you can write to", reportDir, cause(err))
		}
		if err := probeDir(reportDir); err != nil {
			return fmt.Errorf("--out %s: cannot write in the folder: %v; give a folder you can write to", reportDir, cause(err))
		}
	}
	if summaryJSON != "" {
		st, err := os.Stat(summaryJSON)
		switch {
		case err == nil && st.IsDir():
			return fmt.Errorf("--summary-json %s: is a folder; give a file name", summaryJSON)
		case err == nil:
			// Opened without truncating: the old summary stays until the run writes the new one.
			f, err := os.OpenFile(summaryJSON, os.O_WRONLY, 0)
			if err != nil {
				return fmt.Errorf("--summary-json %s: cannot write the file: %v; give a file you can write", summaryJSON, cause(err))
			}
			f.Close()
		default: // missing, or a parent is missing or no folder: can it be created?
			if err := probeDir(filepath.Dir(summaryJSON)); err != nil {
				return fmt.Errorf("--summary-json %s: cannot create the file: %v; give a path in a folder you can write to", summaryJSON, cause(err))
			}
		}
	}
	return nil
}

// probeDir creates and removes a file in dir: permission bits alone do not
// tell (read-only mounts, ACLs, root).
func probeDir(dir string) error {
	f, err := os.CreateTemp(dir, ".ideaflow-probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// cause strips an *fs.PathError down to its errno: the message names the
// path already.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
