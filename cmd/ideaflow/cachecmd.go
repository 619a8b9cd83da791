package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
)

func (a *app) cacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect, share and clean the result cache",
	}
	cmd.AddCommand(a.cacheStatsCmd(), a.cacheLsCmd(), a.cacheGCCmd(), a.cacheExportCmd(), a.cacheImportCmd(), a.cacheVerifyCmd(), a.cacheAdoptCmd(), a.cacheCompactCmd())
	return cmd
}

// cacheMode is how a command opens the cache. Only the commands that fill a
// cache create one; commands that only read open it read-only, so they work
// on shared read-only copies and can never make Badger rewrite a damaged log.
type cacheMode int

const (
	cacheReadOnly cacheMode = iota // existing cache, no writes (plan, stats, ls, verify, export, gc --dry-run, run --offline/--verify)
	cacheExisting                  // existing cache, read-write (gc, verify --repair)
	cacheCreate                    // create if missing (run, import)
)

// openCacheReadOnly is the open for commands that only read the cache (plan).
func (a *app) openCacheReadOnly() (*cache.Badger, error) {
	return a.openCacheMode(cacheReadOnly)
}

// planStore opens the cache read-only for planning (plan, show, export).
// Before the first run the default cache does not exist yet: then every node
// is to run, and planning must not create it; note says so in the caller's
// words. A cache folder named explicitly that does not exist is refused
// instead: it is likely a typo. close releases the store.
func (a *app) planStore(note string) (store cache.Store, close func(), err error) {
	dir := a.cacheDirPath()
	if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) && a.cacheDir == "" && os.Getenv(cache.EnvDir) == "" {
		fmt.Fprintf(a.stderr, "note: no cache at %s yet: %s\n", dir, note)
		return cache.NewMemory(), func() {}, nil
	}
	b, err := a.openCacheReadOnly()
	if err != nil {
		return nil, nil, err
	}
	return b, func() { b.Close() }, nil
}

// runStore opens the cache for a run. A run that makes no call and writes
// nothing it needs (--offline, --verify) opens it read-only, so that it
// leaves a damaged cache exactly as it was; before the first run there is
// no cache, and then nothing is cached.
func (a *app) runStore(readOnly bool) (cache.Store, cache.Recovery, error) {
	if !readOnly {
		b, err := a.openCache()
		if err != nil {
			return nil, cache.Recovery{}, err
		}
		return b, b.Recovery(), nil
	}
	dir := a.cacheDirPath()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.stderr, "note: no cache at %s: nothing is cached\n", dir)
		return cache.NewMemory(), cache.Recovery{}, nil
	}
	b, err := a.openCacheReadOnly()
	if err != nil {
		return nil, cache.Recovery{}, err
	}
	return b, b.Recovery(), nil
}

func (a *app) cacheDirPath() string {
	wd, _ := os.Getwd()
	return cache.ResolveDir(a.cacheDir, wd)
}

func (a *app) openCacheMode(mode cacheMode) (*cache.Badger, error) {
	dir := a.cacheDirPath()
	opts := []cache.Option{cache.WithLogger(a.log)}
	var st *cache.Badger
	var err error
	switch mode {
	case cacheReadOnly:
		st, err = cache.OpenReadOnly(dir, opts...)
	case cacheExisting:
		st, err = cache.Open(dir, opts...)
	default:
		st, err = cache.Create(dir, opts...)
		if err != nil && isPermission(err) {
			// A cache the user may not write (a mounted shared copy) still
			// serves cached results; writes then fail with ErrReadOnly.
			if ro, rerr := cache.OpenReadOnly(dir, opts...); rerr == nil {
				a.log.Warn().Str("cache", dir).Err(err).Msg("cache is not writable; opened read-only: results computed now will not be saved")
				return ro, nil
			}
		}
	}
	if err != nil {
		code := exitBadInput
		if errors.Is(err, cache.ErrDiskFull) {
			code = exitEnvironment
		}
		return nil, &exitError{code, cacheOpenError(err)}
	}
	return st, nil
}

func isPermission(err error) bool {
	return errors.Is(err, cache.ErrNotWritable) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// cacheOpenError adds what to do to the cache package's what and where.
func cacheOpenError(err error) error {
	var hint string
	switch {
	case errors.Is(err, cache.ErrNoCache):
		hint = "check --cache-dir and $" + cache.EnvDir + "; `ideaflow run` (or `ideaflow cache import`) creates a cache"
	case errors.Is(err, cache.ErrLocked):
		hint = "a run is using the cache: wait for it to finish (or stop it), then try again"
	case errors.Is(err, cache.ErrNeedsRecovery):
		hint = "run `ideaflow cache verify --repair` (or the next `ideaflow run`) once to replay the log, then read-only commands work again"
	case errors.Is(err, cache.ErrDiskFull):
		hint = "free some space on that file system and try again"
	case errors.Is(err, cache.ErrDamaged):
		hint = "the folder was left as it was; keep a copy of it if you report the damage"
	default:
		return err
	}
	return fmt.Errorf("%w\n  what to do: %s", err, hint)
}

// withCache makes a command body that needs the cache: the cache is open
// for the length of the body.
func (a *app) withCache(mode cacheMode, body func(store *cache.Badger, args []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		store, err := a.openCacheMode(mode)
		if err != nil {
			return err
		}
		defer store.Close()
		return body(store, args)
	}
}

func (a *app) cacheStatsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count records, bytes, and what the stored results cost to compute",
		Args:  cobra.NoArgs,
		RunE: a.withCache(cacheReadOnly, func(store *cache.Badger, _ []string) error {
			s, err := store.Stats()
			if err != nil {
				return &exitError{exitFailedNodes, err}
			}
			if asJSON {
				return json.NewEncoder(a.stdout).Encode(s)
			}
			fmt.Fprintf(a.stdout, "cache:     %s\nrecords:   %d\nfailures:  %d\nruns:      %d\noutputs:   %d bytes\non disk:   %d bytes\ntokens:    %d in, %d out\nworth:     $%.4f of model calls\n",
				store.Dir(), s.Records, s.Failures, s.Runs, s.OutputBytes, s.DiskBytes, s.InputTokens, s.OutputTokens, s.CostUSD)
			if s.Damaged > 0 {
				fmt.Fprintf(a.stdout, "damaged:   %d record(s) fail their checksum and are not in the sums; `ideaflow cache verify --repair` drops them, the next run recomputes them\n", s.Damaged)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func (a *app) cacheLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List cached records (key, stage, node address, size)",
		Args:  cobra.NoArgs,
		RunE: a.withCache(cacheReadOnly, func(store *cache.Badger, _ []string) error {
			enc := json.NewEncoder(a.stdout)
			damaged := 0
			err := store.List(func(e cache.Entry) error {
				if e.Damaged {
					damaged++
				}
				if asJSON {
					return enc.Encode(e)
				}
				if e.Damaged {
					_, err := fmt.Fprintf(a.stdout, "%s  %7d  DAMAGED (fails its checksum)\n", shortKey(e.Key), e.Bytes)
					return err
				}
				_, err := fmt.Fprintf(a.stdout, "%s  %7d  %s  %s\n", shortKey(e.Key), e.Bytes, e.CreatedAt.Format("2006-01-02 15:04"), e.Address)
				return err
			})
			if err != nil {
				return &exitError{exitFailedNodes, err}
			}
			if damaged > 0 {
				return &exitError{exitFailedNodes, fmt.Errorf("%d damaged record(s); run `ideaflow cache verify --repair` to drop them so the next run recomputes them", damaged)}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per record")
	return cmd
}

// reachable plans each experiment and returns the keys of the cached nodes it reaches.
func (a *app) reachable(store cache.Store, experiments []string) (map[string]bool, error) {
	keep := map[string]bool{}
	for _, path := range experiments {
		g, err := a.load(path)
		if err != nil {
			return nil, err
		}
		p := (&engine.Engine{Store: store, Log: a.log}).Plan(g)
		for k := range p.Keys() {
			keep[k] = true
		}
	}
	return keep, nil
}

func (a *app) cacheGCCmd() *cobra.Command {
	var dryRun, yes bool
	body := func(store *cache.Badger, args []string) error {
		keep, err := a.reachable(store, args)
		if err != nil {
			return err
		}
		pv, err := store.PreviewGC(keep)
		if err != nil {
			return &exitError{exitFailedNodes, err}
		}
		printGCPreview(a.stdout, pv, len(keep), args, experimentPaths(store))
		if pv.Records == 0 || dryRun {
			return nil
		}
		if !yes {
			if !isTerminal(a.stderr) || a.stdin == nil {
				return &exitError{exitBadInput, fmt.Errorf("not deleting %d record(s) without confirmation: pass --yes (or --dry-run to only look)", pv.Records)}
			}
			fmt.Fprintf(a.stderr, "Delete %d record(s), %s? [y/N] ", pv.Records, humanBytes(pv.Bytes))
			answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
			if ans := strings.ToLower(strings.TrimSpace(answer)); ans != "y" && ans != "yes" {
				fmt.Fprintln(a.stdout, "nothing deleted")
				return nil
			}
		}
		removed, err := store.GC(keep)
		if err != nil {
			return &exitError{exitFailedNodes, err}
		}
		fmt.Fprintf(a.stdout, "kept %d records, removed %d\n", len(keep), removed)
		return nil
	}
	cmd := &cobra.Command{
		Use:   "gc EXPERIMENT...",
		Short: "Delete every record the named experiments do not reach (says what first; --dry-run, --yes)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// A dry run only reads: it must leave the cache as it was.
			mode := cacheExisting
			if dryRun {
				mode = cacheReadOnly
			}
			return a.withCache(mode, body)(c, args)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be deleted and delete nothing")
	cmd.Flags().BoolVar(&yes, "yes", false, "delete without asking (for scripts)")
	a.addVarFlags(cmd)
	return cmd
}

func (a *app) cacheAdoptCmd() *cobra.Command {
	var provider string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "adopt EXPERIMENT --provider NAME",
		Short: "Keep answers cached before answers were keyed by who gave them, on your word that provider NAME gave them",
		Long: `Answers cached by an ideaflow before key scheme v2 do not say who gave them,
so after the upgrade every model and service node is asked again. If you know
that provider NAME of EXPERIMENT gave them (the experiment only ever ran
against that endpoint), adopt stores each such record under the new key of
the provider's node, marked adopted and answered by NAME's answerer, so those
nodes need no new call:

  ideaflow cache adopt experiments/ib/main.hcl --provider gateway

A record marked synthetic (the mock's) is never adopted for a provider whose
answers are real, nor a real one for the mock. --dry-run says what it would
adopt and writes nothing. Run it before ` + "`cache gc`" + `, which deletes records no
experiment reaches.`,
		Args: cobra.ExactArgs(1),
		RunE: a.withCache(cacheExisting, func(store *cache.Badger, args []string) error {
			if provider == "" {
				return &exitError{exitBadInput, errors.New("name the provider whose answers these are: --provider NAME")}
			}
			g, err := a.load(args[0])
			if err != nil {
				return err
			}
			rep, err := (&engine.Engine{Store: store, Log: a.log}).Adopt(g, strings.TrimPrefix(provider, "provider."), dryRun)
			switch {
			case errors.Is(err, engine.ErrNoSuchProvider):
				names := make([]string, 0, len(g.Exp.Providers))
				for n := range g.Exp.Providers {
					names = append(names, n)
				}
				sort.Strings(names)
				return &exitError{exitBadInput, fmt.Errorf("%w; it declares %s", err, strings.Join(names, ", "))}
			case err != nil:
				return &exitError{exitFailedNodes, err}
			}
			printAdopt(a.stdout, rep)
			return nil
		}),
	}
	cmd.Flags().StringVar(&provider, "provider", "", "the provider block whose answers the old records are")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be adopted and write nothing")
	a.addVarFlags(cmd)
	return cmd
}

// printAdopt says what adopt did: what it adopted for whom, what it
// refused and why, and what it found nothing for.
func printAdopt(w io.Writer, r *engine.AdoptReport) {
	verb := "adopted"
	if r.DryRun {
		verb = "would adopt"
	}
	fmt.Fprintf(w, "provider.%s (%s): %s %d record(s)", r.Provider, r.Answerer.String(), verb, r.Adopted)
	if r.Answers > 0 {
		fmt.Fprintf(w, " and %d stored answer(s)", r.Answers)
	}
	fmt.Fprintln(w, " cached before answers were keyed by who gave them; they are marked adopted.")
	if r.RefusedSynthetic > 0 {
		fmt.Fprintf(w, "refused %d record(s) marked SYNTHETIC: the mock's answers never serve provider.%s.\n", r.RefusedSynthetic, r.Provider)
	}
	if r.RefusedReal > 0 {
		fmt.Fprintf(w, "refused %d record(s) not marked synthetic: a real answer is never labelled the mock's.\n", r.RefusedReal)
	}
	if r.Cached > 0 {
		fmt.Fprintf(w, "%d node(s) were already cached under the new scheme.\n", r.Cached)
	}
	if r.Missing > 0 {
		fmt.Fprintf(w, "%d node(s) have no record under either scheme: a run asks them.\n", r.Missing)
	}
	if r.Unreached > 0 {
		fmt.Fprintf(w, "%d node(s) were not reached: their inputs are neither cached nor adopted.\n", r.Unreached)
	}
}

// printGCPreview says what gc will delete, by the experiment that last
// computed it, so records of experiments not named are never a surprise.
//
// An experiment is named in the cache's index by its name and a digest of
// its identity (engine.latestPrefix); paths, when given, map those to where
// the experiment was last run from, so two experiments called exp can be
// told apart.
func printGCPreview(w io.Writer, pv cache.GCPreview, kept int, named []string, paths map[string]string) {
	fmt.Fprintf(w, "%d record(s) reached by %s are kept; %d record(s), %s, would be deleted", kept, strings.Join(named, ", "), pv.Records, humanBytes(pv.Bytes))
	if pv.Records == 0 {
		fmt.Fprintln(w, ".")
		return
	}
	fmt.Fprintln(w, ":")
	exps := make([]string, 0, len(pv.ByExperiment))
	for e := range pv.ByExperiment {
		exps = append(exps, e)
	}
	sort.Strings(exps)
	for _, e := range exps {
		name, _, _ := strings.Cut(e, "@")
		label := "experiment " + name
		if p := paths[e]; p != "" {
			label += " (" + p + ")"
		}
		if e == "" {
			label = "no experiment (superseded or orphaned records)"
		}
		fmt.Fprintf(w, "  %6d  last computed by %s\n", pv.ByExperiment[e], label)
	}
}

// experimentPaths maps the experiment part of latest-key addresses to the
// path the experiment last ran from, from the run records (nil when they
// cannot be read: the preview then prints the bare names).
func experimentPaths(store cache.Store) map[string]string {
	runs, err := store.Runs()
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, r := range runs {
		if r.LatestPrefix != "" && r.ExperimentPath != "" {
			out[strings.TrimSuffix(r.LatestPrefix, ":")] = r.ExperimentPath
		}
	}
	return out
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (a *app) cacheExportCmd() *cobra.Command {
	var experiments []string
	cmd := &cobra.Command{
		Use:   "export FILE",
		Short: "Write a portable cache bundle (all records, or only what --experiment reaches)",
		Args:  cobra.ExactArgs(1),
		RunE: a.withCache(cacheReadOnly, func(store *cache.Badger, args []string) error {
			var keys map[string]bool
			if len(experiments) > 0 {
				var err error
				if keys, err = a.reachable(store, experiments); err != nil {
					return err
				}
			}
			f, err := os.Create(args[0])
			if err != nil {
				return &exitError{exitBadInput, fmt.Errorf("create bundle: %w", err)}
			}
			res, err := store.Export(f, keys)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(args[0])
				return &exitError{exitFailedNodes, err} // the cache names the operation
			}
			fmt.Fprintf(a.stdout, "exported %d records to %s\ndigest: sha256:%s\n", res.Written, args[0], res.Digest)
			fmt.Fprintf(a.stdout, "  (send the digest by a channel other than the bundle; the importer checks it with `ideaflow cache import %s --expect sha256:%s`)\n",
				args[0], res.Digest)
			for _, k := range res.WithoutParts {
				fmt.Fprintf(a.stdout, "exported without its damaged key parts (they only explain misses): %s\n", k)
			}
			if len(res.Skipped) > 0 {
				for _, k := range res.Skipped {
					fmt.Fprintf(a.stdout, "skipped corrupt: %s\n", k)
				}
				return &exitError{exitFailedNodes, fmt.Errorf("%d corrupt record(s) were left out of %s; run `ideaflow cache verify --repair`, then re-run the experiment to recompute them", len(res.Skipped), args[0])}
			}
			return nil
		}),
	}
	cmd.Flags().StringArrayVar(&experiments, "experiment", nil, "export only the records this experiment reaches (repeatable)")
	a.addVarFlags(cmd)
	return cmd
}

func (a *app) cacheImportCmd() *cobra.Command {
	var expect string
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import a cache bundle; a corrupt bundle, or one whose digest is not --expect, is refused whole",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return &exitError{exitBadInput, fmt.Errorf("open bundle: %w", err)}
			}
			defer f.Close()
			// Check the whole bundle before the cache is created or opened,
			// so a refused bundle leaves no trace.
			digest, _, err := cache.BundleDigest(f)
			if err == nil && expect != "" && normDigest(expect) != digest {
				err = fmt.Errorf("%w: bundle has sha256:%s, expected sha256:%s", cache.ErrDigestMismatch, digest, normDigest(expect))
			}
			if err != nil {
				return &exitError{exitBadInput, fmt.Errorf("import %s: %w (nothing was imported)", args[0], err)}
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return &exitError{exitBadInput, fmt.Errorf("import %s: %w", args[0], err)}
			}
			store, err := a.openCacheMode(cacheCreate)
			if err != nil {
				return err
			}
			defer store.Close()
			// ImportExpect checks the digest again on the bytes it writes from.
			n, err := store.ImportExpect(f, digest)
			if errors.Is(err, cache.ErrDiskFull) {
				// The bundle was sound; the disk filled part-way.
				return &exitError{exitEnvironment, fmt.Errorf("import %s: %w; %d record(s) were imported before it (they are kept): free some space and import again", args[0], err, n)}
			}
			if err != nil {
				return &exitError{exitBadInput, fmt.Errorf("import %s: %w (nothing was imported)", args[0], err)}
			}
			fmt.Fprintf(a.stdout, "imported %d records from %s (digest sha256:%s)\n", n, args[0], digest)
			if expect == "" {
				fmt.Fprintln(a.stdout, "  note: without --expect the bundle was checked for damage, not for who made it")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&expect, "expect", "", "refuse the bundle unless its digest is this (as `cache export` printed it)")
	return cmd
}

func normDigest(d string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "sha256:"))
}

func (a *app) cacheVerifyCmd() *cobra.Command {
	var repair bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check every entry a run reads, every table block and every log entry (--repair drops what fails)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			mode := cacheReadOnly
			if repair {
				mode = cacheExisting
			}
			return a.withCache(mode, func(store *cache.Badger, _ []string) error {
				if rec := store.Recovery(); repair && (rec.Restored > 0 || rec.Repaired.Dropped() > 0) {
					for _, d := range rec.Damage {
						fmt.Fprintf(a.stdout, "damaged: %s\n", d)
					}
					fmt.Fprintf(a.stdout, "opening repaired it: restored %d entr(ies) from the damaged files; %s\n", rec.Restored, repairText(rec.Repaired))
				}
				r, err := store.Check()
				if err != nil {
					return &exitError{exitFailedNodes, err}
				}
				printCheck(a.stdout, r)
				if repair {
					res, err := store.Repair(r)
					if err != nil {
						return &exitError{exitFailedNodes, err}
					}
					fmt.Fprintf(a.stdout, "repaired: %s\n", repairText(res))
					return nil
				}
				if !r.Sound() {
					return &exitError{exitFailedNodes, fmt.Errorf("the cache is damaged (above); run `ideaflow cache verify --repair`: it restores what the damaged files still hold and drops the rest, which the next run recomputes")}
				}
				fmt.Fprintln(a.stdout, "all entries verified")
				return nil
			})(c, args)
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "restore what damaged files still hold and drop every entry that fails (and the index entries naming it), so the next run recomputes it")
	return cmd
}

// printCheck says what verify read, then every problem it found.
func printCheck(w io.Writer, r cache.CheckReport) {
	fmt.Fprintf(w, "checked %d record(s) (checksum, key, output digest), %d key part(s), %d memo(s), %d latest key(s), %d failure(s), %d run(s)",
		r.Records, r.Parts, r.Memos, r.Latest, r.Failures, r.Runs)
	if r.Tables > 0 || r.Logs > 0 {
		fmt.Fprintf(w, "; %d index table(s), %s, every block against its checksum; %d value log(s), %s, every entry against its CRC",
			r.Tables, humanBytes(r.TableBytes), r.Logs, humanBytes(r.LogBytes))
	}
	fmt.Fprintln(w)
	for _, d := range r.Damage {
		fmt.Fprintf(w, "damaged: %s\n", d)
	}
	for _, k := range r.BadRecords {
		fmt.Fprintf(w, "corrupt: %s\n", k)
	}
	for _, k := range r.BadParts {
		fmt.Fprintf(w, "corrupt key parts (the record is sound): %s\n", k)
	}
	for _, k := range r.BadIndex {
		fmt.Fprintf(w, "corrupt index entry: %s\n", k)
	}
	for _, d := range r.LogDamage {
		fmt.Fprintf(w, "note: value log %s (only records listed as corrupt were in use there)\n", d)
	}
	if r.Dangling > 0 {
		fmt.Fprintf(w, "note: %d memo(s) or latest key(s) name records that are gone (each costs a re-render, no call; --repair drops them)\n", r.Dangling)
	}
}

func repairText(r cache.RepairResult) string {
	return fmt.Sprintf("dropped %d unreadable record(s), %d damaged key part(s) of sound records, %d latest entr(ies) and %d memo(s) that were damaged or named a missing record, and %d other damaged entr(ies) (failures, runs, parts of no record); the next run recomputes the dropped records",
		r.Records, r.Parts, r.Latest, r.Memos, r.Index)
}

// shortKey is the start of a record key, as `cache ls` prints it.
func shortKey(k string) string {
	if len(k) > 16 {
		return k[:16]
	}
	return k
}

// cacheCompactCmd runs the compaction a run does when it closes the cache
// after 20,000 writes or more: for a cache grown by many smaller runs, or
// one whose compaction at the end of a run was interrupted.
func (a *app) cacheCompactCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compact",
		Short: "Compact the cache's tables into one level, so lookups read one (a run does it itself after 20,000 writes)",
		Args:  cobra.NoArgs,
		RunE: a.withCache(cacheExisting, func(store *cache.Badger, _ []string) error {
			if err := store.Compact(); err != nil {
				return &exitError{exitFailedNodes, err}
			}
			fmt.Fprintln(a.stdout, "compacted")
			return nil
		}),
	}
}
