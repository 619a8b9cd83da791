package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/datafetch"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/internal/pack"
)

// packVarsName is the file unpack writes the pack's variables to, beside
// (not in) the experiment folder, where it would be read as configuration.
const packVarsName = "pack.vars"

// defaultMaxPackFile is the size past which a data file is not carried but
// listed by digest, for the receiver to fetch.
const defaultMaxPackFile = 64 << 20

func (a *app) packCmd() *cobra.Command {
	var out string
	var maxFile int64
	cmd := &cobra.Command{
		Use:   "pack OUTPUT [EXPERIMENT] -o FILE.pack",
		Short: "Write one file that rebuilds one report, table or plot with no call: its records, the experiment's files and data, the variables",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{exitBadInput, errors.New("pack: -o FILE.pack is required")}
			}
			a.lastRunVars = true // the values the output was run with
			expPath := expArg(args[1:])
			g, err := a.load(expPath)
			if err != nil {
				return err
			}
			store, err := a.openCacheReadOnly()
			if err != nil {
				return err
			}
			defer store.Close()
			p := (&engine.Engine{Store: store, Log: a.log}).Plan(g)
			if n := p.Missing(); n > 0 {
				return &exitError{exitBadInput, fmt.Errorf("pack: %d node(s) of %s are not cached: run it first (a pack rebuilds what was run, with no call)", n, g.Exp.Name)}
			}
			output := args[0]
			keys, err := p.ClosureKeys(output)
			if err != nil {
				return &exitError{exitBadInput, fmt.Errorf("pack: %w", err)}
			}
			var runs []*cache.RunRecord
			if r := lastRun(store, g); r != nil {
				runs = append(runs, r)
			}
			var bundle bytes.Buffer
			res, err := store.ExportRuns(&bundle, keys, runs)
			if err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("pack: %w", err)}
			}
			if len(res.Skipped) > 0 {
				return &exitError{exitFailedNodes, fmt.Errorf("pack: %d corrupt record(s) (%s...); run `ideaflow cache verify --repair`, then run again", len(res.Skipped), res.Skipped[0])}
			}
			m, entries, err := packFiles(g, maxFile)
			if err != nil {
				return &exitError{exitBadInput, fmt.Errorf("pack: %w", err)}
			}
			m.Experiment, m.Output, m.Records, m.BundleDigest = g.Exp.Name, output, res.Written, "sha256:"+res.Digest
			m.Variables, m.GitCommit = packVariables(g), gitCommit(g.Exp.Dir)
			entries[pack.BundleName] = bundle.Bytes()
			b, err := pack.Write(m, entries)
			if err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("pack: %w", err)}
			}
			if err := writeFileAtomic(out, b); err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("pack: %w", err)}
			}
			fmt.Fprintf(a.stdout, "packed %s of %s: %d records, %d files, %d bytes to %s\ndigest: %s\n",
				output, g.Exp.Name, res.Written, len(entries)-1, len(b), out, pack.Digest(b))
			for _, x := range m.External {
				why := fmt.Sprintf("over %d bytes", maxFile)
				if filepath.IsAbs(x.Path) {
					why = "outside the experiment folder"
				}
				where := "no known source: send it beside the pack"
				if x.Source != "" {
					where = "the receiver gets it with " + x.Source
				}
				fmt.Fprintf(a.stdout, "  not carried (%s): %s, %d bytes, %s; %s\n", why, x.Path, x.Size, x.SHA256, where)
			}
			fmt.Fprintf(a.stdout, "  (rebuild it with `ideaflow reproduce %s DIR`; send the digest by another channel to authenticate it)\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the pack file to write")
	cmd.Flags().Int64Var(&maxFile, "max-file", defaultMaxPackFile, "files larger than this many bytes are listed by digest, not carried")
	a.addVarFlags(cmd)
	return cmd
}

// packFiles collects the experiment's files and the dataset files outside
// its folder (by digest only). A folder experiment is its folder (results,
// hidden files and packs left out); a one-file experiment, which shares its
// folder with others, is its file, its lock and the files it reads (its
// datasets and what file() and templatefile() read).
func packFiles(g *engine.Graph, maxFile int64) (*pack.Manifest, map[string][]byte, error) {
	m := &pack.Manifest{Root: filepath.Base(g.Exp.Dir)}
	if fi, err := os.Stat(g.Exp.Path); err == nil && !fi.IsDir() {
		m.Main = filepath.Base(g.Exp.Path)
	}
	entries := map[string][]byte{}
	if m.Main != "" {
		if err := packRead(g, m, entries, maxFile); err != nil {
			return nil, nil, err
		}
		return m, entries, nil
	}
	results, _ := filepath.Abs(g.Exp.ResultsDir)
	err := filepath.WalkDir(g.Exp.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != g.Exp.Dir && strings.HasPrefix(name, ".") || p == results {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || strings.HasSuffix(name, ".pack") {
			return nil
		}
		rel, err := filepath.Rel(g.Exp.Dir, p)
		if err != nil {
			return err
		}
		return addPackFile(m, entries, p, filepath.ToSlash(rel), maxFile)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read the experiment's files: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(g.Exp.Datasets)) {
		ds := g.Exp.Datasets[name]
		if rel, err := filepath.Rel(g.Exp.Dir, ds.Path); err == nil && !strings.HasPrefix(rel, "..") {
			continue // carried with the folder
		}
		files, err := datasetFiles(ds.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("dataset %s: %w", name, err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, nil, fmt.Errorf("dataset %s: %w", name, err)
			}
			m.External = append(m.External, external(p, b))
		}
	}
	return m, entries, nil
}

// datasetFiles lists a dataset's files: its file, or every regular file
// under its folder (ScholarIdeas), hidden ones left out, in path order.
func datasetFiles(path string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// packRead collects a one-file experiment's files: the file, its lock when
// there is one, and every file it reads (under a dataset folder, each file);
// those outside the experiment's folder by digest only.
func packRead(g *engine.Graph, m *pack.Manifest, entries map[string][]byte, maxFile int64) error {
	paths := map[string]bool{g.Exp.Path: true}
	if lock := engine.LockPath(g.Exp.Path); fileExists(lock) {
		paths[lock] = true
	}
	for _, p := range g.Exp.ReadFiles {
		paths[p] = true
	}
	for _, ds := range g.Exp.Datasets {
		files, err := datasetFiles(ds.Path)
		if err != nil {
			return fmt.Errorf("dataset %s: %w", ds.Name, err)
		}
		for _, p := range files {
			paths[p] = true
		}
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		rel, err := filepath.Rel(g.Exp.Dir, p)
		if err == nil && !strings.HasPrefix(rel, "..") {
			if err := addPackFile(m, entries, p, filepath.ToSlash(rel), maxFile); err != nil {
				return err
			}
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m.External = append(m.External, external(p, b))
	}
	return nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// external is a data file a pack does not carry, with where to get its
// bytes when they are a benchmark's pinned file.
func external(path string, b []byte) pack.External {
	x := pack.External{Path: path, Size: int64(len(b)), SHA256: digestOf(b)}
	if set, f, ok := datafetch.ByDigest(strings.TrimPrefix(x.SHA256, "sha256:")); ok {
		x.Source = fmt.Sprintf("ideaflow data get %s: %s of %s@%.7s", set.Name, f.Path, set.Repo, set.Commit)
		if set.License != "" {
			x.Source += " (" + set.License + ")"
		}
	}
	return x
}

func addPackFile(m *pack.Manifest, entries map[string][]byte, path, rel string, maxFile int64) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if int64(len(b)) > maxFile {
		m.External = append(m.External, external(rel, b))
		return nil
	}
	entries[pack.ExperimentDir+rel] = b
	return nil
}

// packVariables are every variable's value as an HCL literal, those that
// hold a secret left out (the receiver gives them).
func packVariables(g *engine.Graph) map[string]string {
	out := map[string]string{}
	for name, v := range g.Exp.Variables {
		lit := hclLiteral(v)
		if lit == "" || secretIn(lit) != "" {
			continue
		}
		out[name] = lit
	}
	return out
}

// unpackTo checks a pack and writes it under dir: the experiment in
// dir/<root>, the variables in dir/pack.vars. It returns the manifest, the
// bundle, the experiment's and the variables' paths, and lacking, which
// names the data files the pack does not carry and this machine lacks (the
// rest is unpacked: the receiver puts them there and runs). dir must be
// empty or not exist.
func unpackTo(file, dir string) (m *pack.Manifest, bundle []byte, exp, vars string, lacking, err error) {
	m, bundle, exp, vars, err = unpackFiles(file, dir)
	var l lackingFiles
	if errors.As(err, &l) {
		return m, bundle, exp, vars, err, nil
	}
	return m, bundle, exp, vars, nil, err
}

// lackingFiles is unpackFiles' error for data files it could not check.
type lackingFiles struct{ files []string }

func (l lackingFiles) Error() string {
	return "the pack does not carry these data files, and they are not there: put them there (same digest), then run: " + strings.Join(l.files, "; ")
}

func unpackFiles(file, dir string) (*pack.Manifest, []byte, string, string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("read pack: %w", err)
	}
	m, entries, err := pack.Read(b)
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("%s: %w", file, err)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, nil, "", "", fmt.Errorf("unpack into %s: the folder is not empty", dir)
	}
	root := filepath.Join(dir, m.Root)
	for name, content := range entries {
		rel, ok := strings.CutPrefix(name, pack.ExperimentDir)
		if !ok {
			continue
		}
		// A pack comes from someone else: no path leaves the folder.
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return nil, nil, "", "", fmt.Errorf("unpack: entry %q leaves the folder", name)
		}
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, nil, "", "", fmt.Errorf("unpack: %w", err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return nil, nil, "", "", fmt.Errorf("unpack: %w", err)
		}
	}
	var missing []string
	for _, x := range m.External {
		p := x.Path
		outside := filepath.IsAbs(p)
		if !outside {
			p = filepath.Join(root, filepath.FromSlash(p))
		}
		b, err := os.ReadFile(p)
		switch {
		case err != nil && outside:
			// A file outside the packer's experiment folder (the authors'
			// data folder): this machine's experiment finds its own copy
			// (ideaflow data get); loading names it if it cannot.
		case err != nil && x.Source != "":
			missing = append(missing, fmt.Sprintf("%s (%d bytes, %s; %s, then copy it there)", p, x.Size, x.SHA256, x.Source))
		case err != nil:
			missing = append(missing, fmt.Sprintf("%s (%d bytes, %s)", p, x.Size, x.SHA256))
		case digestOf(b) != x.SHA256:
			missing = append(missing, fmt.Sprintf("%s differs from the packed run's (want %d bytes, %s)", p, x.Size, x.SHA256))
		}
	}
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(m.Variables)) {
		lines = append(lines, name+" = "+m.Variables[name])
	}
	vars := filepath.Join(dir, packVarsName)
	if err := os.WriteFile(vars, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return nil, nil, "", "", fmt.Errorf("unpack: %w", err)
	}
	exp := root
	if m.Main != "" {
		exp = filepath.Join(root, m.Main)
	}
	if len(missing) > 0 {
		return m, entries[pack.BundleName], exp, vars, lackingFiles{missing}
	}
	return m, entries[pack.BundleName], exp, vars, nil
}

// importPackBundle imports the pack's records into the cache.
func (a *app) importPackBundle(m *pack.Manifest, bundle []byte) (int, error) {
	store, err := a.openCacheMode(cacheCreate)
	if err != nil {
		return 0, err
	}
	defer store.Close()
	n, err := store.ImportExpect(bytes.NewReader(bundle), m.BundleDigest)
	if err != nil {
		return n, &exitError{exitFailedNodes, fmt.Errorf("import the pack's records: %w", err)}
	}
	return n, nil
}

func (a *app) unpackCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unpack FILE.pack DIR",
		Short: "Check a pack (refused whole if any byte changed), write its experiment under DIR and import its records into the cache",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			m, bundle, exp, vars, lacking, err := unpackTo(args[0], args[1])
			if err != nil {
				return &exitError{exitBadInput, err}
			}
			n, err := a.importPackBundle(m, bundle)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "unpacked %s of %s into %s: %d records imported into %s\n  rebuild it with: ideaflow report %s --var-file %s (no call)\n",
				m.Output, m.Experiment, exp, n, a.cacheDirPath(), exp, vars)
			if lacking != nil {
				return &exitError{exitBadInput, lacking}
			}
			return nil
		},
	}
}

func (a *app) reproduceCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "reproduce FILE.pack DIR",
		Short: "Unpack a pack into DIR (records into DIR/.cache unless --cache-dir) and rebuild its output from them: no call",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			m, bundle, exp, vars, lacking, err := unpackTo(args[0], args[1])
			if err != nil {
				return &exitError{exitBadInput, err}
			}
			if a.cacheDir == "" {
				a.cacheDir = filepath.Join(args[1], ".cache")
			}
			n, err := a.importPackBundle(m, bundle)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "unpacked %s of %s into %s: %d records imported into %s\n", m.Output, m.Experiment, exp, n, a.cacheDirPath())
			if lacking != nil {
				return &exitError{exitBadInput, fmt.Errorf("%w (then: ideaflow report %s --var-file %s --cache-dir %s)", lacking, exp, vars, a.cacheDirPath())}
			}
			// Only the pack's output is rebuilt: the records of the other
			// reports are not in it. Rendering makes no call.
			g, err := a.loadWith(exp, nil, []string{vars})
			if err != nil {
				return err
			}
			store, err := a.openCacheReadOnly()
			if err != nil {
				return err
			}
			defer store.Close()
			got, err := (&engine.Engine{Store: store, Log: a.log}).RenderReports(g, engine.RunOptions{
				Variables: variableStrings(g), GitCommit: m.GitCommit, Version: versionString()})
			if err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("reproduce %s: %w", m.Output, err)}
			}
			for _, miss := range got.Missing {
				if miss.Report == m.Output || strings.HasPrefix(miss.Report, m.Output+"[") {
					return &exitError{exitFailedNodes, fmt.Errorf("reproduce: the pack's records do not rebuild %s: %s", m.Output, miss)}
				}
				fmt.Fprintf(a.stdout, "not rebuilt (not in this pack): %s\n", miss.Report)
			}
			for _, p := range got.Reports {
				fmt.Fprintf(a.stdout, "wrote %s\n", p)
			}
			fmt.Fprintf(a.stdout, "rebuilt %s from the pack: no model or service call\n", m.Output)
			return nil
		},
	}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
