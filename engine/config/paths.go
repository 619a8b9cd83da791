package config

// Paths an experiment reads: relative to its folder, regular files within
// declared sizes, and, under --confine, inside the experiment folder.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ideaflow/ideaflow/stages/datasets"
)

// MaxFileFunctionBytes bounds what file() and templatefile() read: prompt
// templates and small JSON documents are kilobytes, and every string an
// expression builds is bounded the same (MaxStringBytes), so a file() of
// /dev/zero or a 1 GB file is a located error rather than gigabytes.
const MaxFileFunctionBytes = 16 << 20

// MaxSettingFileBytes bounds a provider's file setting (a corpus), which
// the provider reads whole and indexes.
const MaxSettingFileBytes = 1 << 30

// confinement is --confine: every file the experiment reads must resolve,
// symlinks and .. followed, inside one of roots (the experiment folder and
// the user cache), so a shared experiment cannot read a private file and
// send it to its own base_url in a prompt.
type confinement struct {
	roots []string // real paths
}

func newConfinement(dir string, also []string) *confinement {
	c := &confinement{}
	for _, r := range append([]string{dir}, also...) {
		if r == "" {
			continue
		}
		if abs, err := filepath.Abs(r); err == nil {
			r = abs
		}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		}
		c.roots = append(c.roots, filepath.Clean(r))
	}
	return c
}

// check refuses path unless it resolves inside a root. A path that does not
// exist passes: opening it fails and says so.
func (c *confinement) check(path string) error {
	if c == nil {
		return nil
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, r := range c.roots {
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil
		}
	}
	via := ""
	if filepath.Clean(path) != real {
		via = " (it resolves to " + real + ")"
	}
	return fmt.Errorf("%s is outside the experiment folder%s: with --confine an experiment may read only under %s; copy the file into the experiment folder, or run without --confine if you trust the experiment",
		path, via, strings.Join(c.roots, " and "))
}

// resolve turns a path as written in the experiment into the path to open:
// relative to the experiment folder, and allowed by --confine.
func (l *loader) resolve(name string) (string, error) {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.exp.Dir, path)
	}
	if err := l.confine.check(path); err != nil {
		return "", err
	}
	return path, nil
}

// resolveRead is resolve for the experiment language's functions: it notes
// each regular file resolved (file(), templatefile()), which
// Experiment.ReadFiles lists. A provider's file settings go through
// resolve alone: they may hold secrets, and are no input of an output.
func (l *loader) resolveRead(name string) (string, error) {
	path, err := l.resolve(name)
	if err != nil {
		return path, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		if l.read == nil {
			l.read = map[string]bool{}
		}
		l.read[path] = true
	}
	return path, nil
}

// readablePath resolves a file the run reads whole (a provider's file
// setting) and checks it now: it exists, is a regular file and is at most
// MaxSettingFileBytes.
func (l *loader) readablePath(name string) (string, error) {
	path, err := l.resolve(name)
	if err != nil {
		return "", err
	}
	return path, checkFile(name, path, MaxSettingFileBytes)
}

// checkFile checks that path (name as written) is a regular file of at most
// max bytes, without opening it (opening a pipe would block).
func checkFile(name, path string, max int64) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no file exists at %q (paths are relative to the experiment folder)", name)
	case err != nil:
		return err
	}
	return datasets.CheckRegular(name, st, max)
}

// readExperimentFile reads a file() or templatefile() argument.
func readExperimentFile(resolve func(string) (string, error), name string) ([]byte, error) {
	path, err := resolve(name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no file exists at %q (paths are relative to the experiment folder)", name)
	}
	b, err := datasets.ReadRegular(path, MaxFileFunctionBytes)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", name, err)
	}
	return b, nil
}
