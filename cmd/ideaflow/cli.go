package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/datafetch"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	_ "github.com/ideaflow/ideaflow/stages/all"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailedNodes = 1
	exitBadInput    = 2
	exitBudget      = 3 // --max-cost stopped the run: what was paid for is cached
	// exitEnvironment is a failure of the machine, not of the experiment
	// nor of a model: the disk holding the cache is full. 74 is sysexits'
	// EX_IOERR. What was reported saved is saved; free space and re-run.
	exitEnvironment = 74
	exitInterrupted = 130
	// exitInternal is a bug: a panic or a Go fatal error (crash.go). 70 is
	// sysexits' EX_SOFTWARE: not 2 (bad input, which Go's runtime would
	// use), nor 1, 3 or 4, which other outcomes use or will.
	exitInternal = 70
)

// processStart is when the process started: run summaries report the whole
// wall time, loading included.
var processStart = time.Now()

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

type app struct {
	stdin          io.Reader // gc asks for confirmation on a terminal
	stdout, stderr io.Writer
	cacheDir       string
	logFormat      string
	logLevel       string
	vars           []string
	varFiles       []string
	confine        bool // --confine: reads stay in the experiment folder and the cache
	// missingCache is set by planStore when the cache folder holds no cache
	// yet: what it found ("the folder does not exist"), for plan's header.
	missingCache string
	// lastRunVars: this command describes what was run, so load defaults
	// the variables to the last run's (show, export, report).
	lastRunVars bool
	// layAhead is engine.BuildOptions.LayAhead for this command's load: set
	// by run, whose plan sends calls as it finds them, so the largest
	// graphs start calling before they are laid out whole.
	layAhead int
	// shared is the read-only cache load opened to find the last run; the
	// command's own open reuses it, and Main closes it.
	shared      readStore
	sharedTried bool
	log         zerolog.Logger
	// cacheRemote, cacheRemoteEndpoint: run --cache-remote (remote.go).
	cacheRemote, cacheRemoteEndpoint string
}

// Main runs the CLI with args and returns the exit code. A panic on its
// goroutine is an internal error (exitInternal), reported with a hint, not
// a stack (crash.go).
func Main(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil {
			code = recovered(stderr, v, debug.Stack())
		}
	}()
	processStart = time.Now()
	a := &app{stdin: os.Stdin, stdout: stdout, stderr: stderr}
	root := a.rootCmd()
	root.SetArgs(terraformStyleFlags(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	a.closeShared()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "ideaflow:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "ideaflow:", err)
	return exitBadInput
}

// terraformStyleFlags accepts Terraform's single-dash -var and -var-file,
// which researchers type from habit, as the double-dash flags they are.
func terraformStyleFlags(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, f := range []string{"-var", "-var-file"} {
			if a == f || strings.HasPrefix(a, f+"=") {
				a = "-" + a
			}
		}
		out[i] = a
	}
	return out
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "ideaflow",
		Short:         "Declarative, cached experiments for benchmarking LLMs at research ideation",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			switch cmd.Name() {
			case "show", "export", "report":
				a.lastRunVars = cmd.Parent() == cmd.Root() // not `cache export`
			}
			return a.setupLogging()
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.cacheDir, "cache-dir", "", "cache folder (default $IDEAFLOW_CACHE_DIR, else the user cache folder: $XDG_CACHE_HOME/ideaflow or ~/.cache/ideaflow)")
	pf.StringVar(&a.logFormat, "log-format", "", "log format: json or console (default console on a terminal, json otherwise)")
	pf.StringVar(&a.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.BoolVar(&a.confine, "confine", false, "refuse every read of the experiment (file(), templatefile, dataset, references, categories and corpus paths) outside its folder and the cache, symlinks and .. resolved: for running experiments from others")
	root.AddCommand(a.validateCmd(), a.planCmd(), a.runCmd(), a.reportCmd(), a.graphCmd(), a.showCmd(), a.exportCmd(), a.checkCmd(), a.packCmd(), a.unpackCmd(), a.reproduceCmd(), a.verifyCmd(), a.evidenceCmd(), a.docCmd(), a.cacheCmd(), a.dataCmd(), a.batchesCmd(), a.serverCmd(), a.workerCmd(), a.versionCmd())
	return root
}

func (a *app) addVarFlags(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&a.vars, "var", nil, "set a variable: -var n=5 (repeatable)")
	cmd.Flags().StringArrayVar(&a.varFiles, "var-file", nil, "read variables from an HCL file of name = value lines (repeatable)")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) setupLogging() error {
	lvl, err := zerolog.ParseLevel(a.logLevel)
	if err != nil {
		return &exitError{exitBadInput, fmt.Errorf("--log-level %q: use debug, info, warn or error", a.logLevel)}
	}
	format := a.logFormat
	if format == "" {
		format = "json"
		if isTerminal(a.stderr) {
			format = "console"
		}
	}
	var w io.Writer
	switch format {
	case "json":
		w = a.stderr
	case "console":
		w = zerolog.ConsoleWriter{Out: a.stderr, TimeFormat: "15:04:05", NoColor: !isTerminal(a.stderr)}
	default:
		return &exitError{exitBadInput, fmt.Errorf("--log-format %q: use json or console", a.logFormat)}
	}
	// Nodes log from many goroutines; the writer Main was given need not be safe for that.
	a.log = zerolog.New(zerolog.SyncWriter(w)).Level(lvl).With().Timestamp().Logger()
	return nil
}

// openCache opens the cache for a command that fills it (run), creating it
// if needed; see cachecmd.go for the read-only and existing-only opens.
func (a *app) openCache() (*cache.Badger, error) {
	return a.openCacheMode(cacheCreate)
}

// load decodes and lays out an experiment, printing diagnostics. For the
// commands that describe what was run (show, export, report), variables not
// given take the last run's values (runvars.go).
func (a *app) load(path string) (*engine.Graph, error) {
	if a.lastRunVars {
		return a.loadLastRun(path)
	}
	return a.loadWith(path, a.vars, a.varFiles)
}

// loadWith is load with these -var and -var-file values.
func (a *app) loadWith(path string, vars, varFiles []string) (*engine.Graph, error) {
	opts := config.Options{Vars: vars, VarFiles: varFiles}
	if a.confine {
		// The data folder holds the authors' files authors_file() finds.
		opts.Confine, opts.ConfineAlso = true, []string{a.cacheDirPath(), datafetch.DefaultDir(filepath.Dir(path))}
	}
	exp, diags := config.Load(path, opts)
	if diags.HasErrors() {
		var files map[string]*hcl.File
		if exp != nil {
			files = exp.Files
			// Lay out what decoded, so dataset and layout errors of the
			// untouched blocks come in this pass too, not in the next.
			_, more := engine.Build(exp)
			for _, d := range more {
				if d.Severity == hcl.DiagError {
					diags = append(diags, d)
				}
			}
			diags = config.Dedupe(diags)
		}
		config.WriteDiagnostics(a.stderr, diags, filesOf(path, files))
		return nil, &exitError{exitBadInput, fmt.Errorf("%d error(s) in %s", len(diags.Errs()), path)}
	}
	config.WriteDiagnostics(a.stderr, diags, exp.Files) // warnings: config.Load returned no error
	bo := engine.BuildOptions{LayAhead: a.layAhead}
	if exp.StopWhen != nil {
		bo.LayAhead = 0 // rounds re-plan a graph laid out whole
	}
	g, diags := engine.BuildWith(exp, bo)
	if diags.HasErrors() {
		diags = config.Dedupe(diags) // the count is of what is printed: one per block, not per for_each instance
		config.WriteDiagnostics(a.stderr, diags, exp.Files)
		return nil, &exitError{exitBadInput, fmt.Errorf("%d error(s) in %s", len(diags.Errs()), path)}
	}
	config.WriteDiagnostics(a.stderr, config.Dedupe(diags), exp.Files) // warnings: once per block, not per for_each instance
	return g, nil
}

// filesOf parses the experiment's files again when loading failed early, so
// diagnostics can show the offending line.
func filesOf(path string, files map[string]*hcl.File) map[string]*hcl.File {
	if files != nil {
		return files
	}
	return config.SourceFiles(path)
}

func expArg(args []string) string {
	if len(args) == 0 {
		return "."
	}
	return args[0]
}

func (a *app) validateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [EXPERIMENT]",
		Short: "Check an experiment: syntax, types, references, cycles, datasets, templates",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			// A missing key is only an error when a run needs the provider
			// (a cached experiment runs without it), so validate warns, and
			// only for providers a used model points at.
			warnings := g.Exp.MissingKeys(g.Providers())
			for _, d := range warnings {
				d.Severity = hcl.DiagWarning
				d.Summary += " (needed only for nodes not in the cache)"
			}
			config.WriteDiagnostics(a.stderr, warnings, g.Exp.Files)
			st := g.Stats()
			fmt.Fprintf(a.stdout, "%s is valid: %d stage instances, %d nodes over %d items.\n", g.Exp.Name, st.Instances, st.Nodes, st.Items)
			return nil
		},
	}
	a.addVarFlags(cmd)
	return cmd
}

func (a *app) planCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan [EXPERIMENT]",
		Short: "Show what is cached, what will run and why, and what it will cost",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			store, closeStore, err := a.planStore("every node will run (ideaflow run creates it)")
			if err != nil {
				return err
			}
			defer closeStore()
			dir := a.cacheDirPath()
			e := &engine.Engine{Store: store, Log: a.log}
			p := e.Plan(g)
			if p.Diags.HasErrors() {
				config.WriteDiagnostics(a.stderr, p.Diags, g.Exp.Files)
				return &exitError{exitBadInput, fmt.Errorf("%d error(s) laying out %s", len(p.Diags.Errs()), g.Exp.Name)}
			}
			config.WriteDiagnostics(a.stderr, config.Dedupe(p.Diags), g.Exp.Files) // warnings of stages laid out as the plan went
			if asJSON {
				out := planJSON{PlanSummary: p.Summary}
				drift, found, err := lockDrift(e, p, g)
				if lock := filepath.Base(engine.LockPath(g.Exp.Path)); err != nil {
					out.Lock = &lockJSON{File: lock, Drift: []string{}, Error: err.Error()}
				} else if found {
					out.Lock = &lockJSON{File: lock, Drift: append([]string{}, drift...)}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			where := dir
			if a.missingCache != "" {
				where += ", which does not exist yet: " + a.missingCache + "; nothing is cached"
			}
			fmt.Fprintf(a.stdout, "Plan for %s (cache: %s)\n\n", g.Exp.Name, where)
			printPlan(a.stdout, g, p.Summary, expArg(args))
			printLockDrift(a.stdout, e, p, g)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	a.addVarFlags(cmd)
	return cmd
}

func printPlan(w io.Writer, g *engine.Graph, p *engine.PlanSummary, exp string) {
	for _, addr := range p.Order {
		c := p.Stages[addr]
		est := ""
		if e := c.Estimate; e != nil {
			est = "  " + estimateText(e)
		}
		fmt.Fprintf(w, "  %-56s %6d nodes  %6d cached  %6d to run%s\n", addr, c.Total, c.Cached, c.ToRun, est)
		reasons := make([]string, 0, len(c.Reasons))
		for r := range c.Reasons {
			reasons = append(reasons, r)
		}
		sort.Slice(reasons, func(i, j int) bool {
			if c.Reasons[reasons[i]] != c.Reasons[reasons[j]] {
				return c.Reasons[reasons[i]] > c.Reasons[reasons[j]]
			}
			return reasons[i] < reasons[j]
		})
		for _, r := range reasons {
			fmt.Fprintf(w, "      %6d  %s\n", c.Reasons[r], r)
		}
		for m, n := range c.ServedModels {
			fmt.Fprintf(w, "      note: %d cached answer(s) were served by model %q\n", n, m)
		}
		if pe := c.Pending; pe != nil {
			fmt.Fprintf(w, "      %s\n", pendingText(pe))
		}
		printDrops(w, c.Drops)
		for _, why := range slices.Sorted(maps.Keys(c.WillFail)) {
			fmt.Fprintf(w, "      %6d  item(s) will fail: %s\n", c.WillFail[why], why)
		}
	}
	e := p.Estimate
	fmt.Fprintf(w, "\n%d nodes: %d cached, %d to run.\n", p.Nodes.Total, p.Nodes.Cached, p.Nodes.ToRun)
	switch {
	case p.ReasonsFrom == "":
	case p.ReasonsFrom == g.Exp.Path:
		fmt.Fprintln(w, "Reasons compare with this experiment's last run before its settings { name } changed: it has not run under the new name yet.")
	default:
		fmt.Fprintf(w, "Reasons compare with the last run of %s, which is no longer there (moved or renamed?): this experiment has not run here yet.\n", p.ReasonsFrom)
	}
	services := ""
	if e.ServiceCalls > 0 {
		services = fmt.Sprintf(", %d service calls", e.ServiceCalls)
	}
	if e.Choices > 0 {
		services += " (n_choices: a prompt's samples share one request)"
	}
	fmt.Fprintf(w, "Estimate: %s%s, ~%d input + ~%d output tokens, %s.\n",
		modelCallsText(e.LLMCalls, e.LLMCalls+e.Choices), services, e.TokensInput, e.TokensOutput, costText(&e))
	if e.LLMCalls > 0 {
		counted := "input counted with the models' tokenizers"
		if e.ApproxTokens {
			counted = "input partly approximated at 4 bytes per token (a model without a public tokenizer, or a prompt not rendered yet)"
		}
		fmt.Fprintf(w, "  tokens: %s; output at max_tokens, an upper bound.\n", counted)
	}
	if b := p.Batch; b != nil {
		fmt.Fprintln(w, batchPlanText(b, &e))
	}
	if ub := p.UpperBound; ub.LLMCalls > 0 || ub.ServiceCalls > 0 {
		fmt.Fprintf(w, "Not yet known: stages that expand after others run may add up to %d calls, %s (an upper bound, at each stage's limit per item).\n",
			ub.LLMCalls+ub.ServiceCalls, costText(&ub))
	}
	for _, c := range p.AnswererChanges {
		fmt.Fprintln(w, answererChangeText(exp, c))
	}
}

// answererChangeText says where answers will come from when it differs
// from the cache: "36 cached answers are the mock's (seed 7); provider.gw
// will be asked (endpoint https://gw.example/v1)."
func answererChangeText(exp string, c engine.AnswererChange) string {
	answers, are := fmt.Sprintf("%d cached answers", c.Nodes), "are"
	if c.Nodes == 1 {
		answers, are = "1 cached answer", "is"
	}
	asked := fmt.Sprintf("provider.%s will be asked (%s)", c.Provider, c.To)
	switch {
	case c.OldScheme:
		return fmt.Sprintf("%s %s from before answers were keyed by who gave them; %s. If you know they are provider.%s's, "+
			"`ideaflow cache adopt %s --provider %s` keeps them.", answers, are, asked, c.Provider, exp, c.Provider)
	case strings.HasPrefix(c.From, "mock"):
		return fmt.Sprintf("%s %s the mock's (%s); %s.", answers, are, strings.TrimSpace(strings.TrimPrefix(c.From, "mock")), asked)
	}
	return fmt.Sprintf("%s came from %s; %s.", answers, c.From, asked)
}

// printDrops says, for the stage that dropped items, how many and why (the
// top reasons); stages that only pass a drop on stay quiet.
func printDrops(w io.Writer, d engine.Drops) {
	type reason struct {
		why string
		n   int
	}
	var rs []reason
	for why, n := range d.DropReasons {
		if why != "dropped upstream" {
			rs = append(rs, reason{why, n})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || (rs[i].n == rs[j].n && rs[i].why < rs[j].why) })
	for k, r := range rs {
		if k == 3 {
			fmt.Fprintf(w, "      ... and %d more drop reasons\n", len(rs)-3)
			break
		}
		fmt.Fprintf(w, "      %6d  item(s) dropped: %s\n", r.n, r.why)
	}
}

func estimateText(e *engine.Estimate) string {
	calls := fmt.Sprintf("~%d calls", e.LLMCalls)
	if e.ServiceCalls > 0 {
		calls = fmt.Sprintf("~%d calls, ~%d service calls", e.LLMCalls, e.ServiceCalls)
		if e.LLMCalls == 0 {
			calls = fmt.Sprintf("~%d service calls", e.ServiceCalls)
		}
	}
	if e.Choices > 0 {
		calls += fmt.Sprintf(" (+%d samples as extra choices)", e.Choices)
	}
	return fmt.Sprintf("%s, ~%d+%d tokens, %s", calls, e.TokensInput, e.TokensOutput, costText(e))
}

// costText prices an estimate, never calling an unknown price $0: calls to
// models without a price block are named and left out of the sum.
func costText(e *engine.Estimate) string { return costFigure("~", e.CostUSD, e.Unpriced) }

// costFigure prints a cost (prefix "~" for an estimate) that is either known
// or said to be unknown: usd sums the priced calls, unpriced names the
// models without a price whose calls it leaves out.
func costFigure(prefix string, usd float64, unpriced []string) string {
	if len(unpriced) == 0 {
		return fmt.Sprintf("%s$%.4f", prefix, usd)
	}
	unknown := fmt.Sprintf("cost unknown (no price for %s)", strings.Join(unpriced, ", "))
	if usd == 0 {
		return unknown
	}
	return fmt.Sprintf("%s$%.4f for priced models, %s", prefix, usd, unknown)
}

// pendingText says why a stage's nodes are not all known yet.
func pendingText(pe *engine.Pending) string {
	after := strings.Join(pe.After, ", ")
	if !pe.LaidOut && pe.MaxPerItem == 0 {
		return "laid out after " + after + " is complete"
	}
	s := fmt.Sprintf("expands after %s runs (at most %d per item, %d item(s) to expand)", after, pe.MaxPerItem, pe.Items)
	if ub := pe.UpperBound; ub != nil {
		s += fmt.Sprintf(": at most %d calls, %s (an upper bound)", ub.LLMCalls+ub.ServiceCalls, costText(ub))
	}
	return s
}

func (a *app) runCmd() *cobra.Command {
	var offline, verify, allowUnpriced, detach bool
	var maxCost float64
	var summaryJSON, outDir, executorKind string
	cmd := &cobra.Command{
		Use:   "run [EXPERIMENT]",
		Short: "Run an experiment; only nodes not in the cache are computed",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !offline && !verify && maxCost == 0 {
				// Calls go out while planning (engine/early.go): lay the
				// largest graphs out as the walk goes.
				a.layAhead = engine.DefaultLayAhead
			}
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			if err := checkOutputs(outDir, summaryJSON); err != nil {
				return &exitError{exitBadInput, err}
			}
			// --offline and --verify only read: a read-only cache leaves a
			// damaged cache as it was (what they compute is not saved).
			store, recovery, err := a.runStore(offline || verify)
			if err != nil {
				return err
			}
			defer store.Close()
			local := store // the local cache, under a remote tier if any
			if verify {
				return a.verify(g, store)
			}
			fmt.Fprintf(a.stdout, "Running %s (cache: %s)\n", g.Exp.Name, a.cacheDirPath())
			stopServing := func() {}
			if b, ok := store.(*cache.Badger); ok && !offline {
				// Closed before the store (closeStore, or deferred after it).
				if srv, err := b.Serve(); err != nil {
					a.log.Debug().Err(err).Msg("cache not served to readers")
				} else {
					stopServing = sync.OnceFunc(func() { srv.Close() })
					defer stopServing()
					fmt.Fprintf(a.stdout, "While it runs, plan, show, export, report and cache stats read the cache through %s.\n", srv.Path())
				}
			}
			// closeStore closes the cache before the summary is printed, so
			// that its wall time is the process's: a run that wrote 20,000
			// records or more compacts the cache as it closes (cache/badger.go
			// flattenAfter), 1-70 s at 50k-1M writes, which the summary
			// shows as its own phase instead of a silent tail after it.
			closeStore := func(sum *engine.Summary) {
				stopServing()
				t0 := time.Now()
				if cerr := store.Close(); cerr != nil {
					fmt.Fprintf(a.stderr, "warning: %v\n", cerr)
				}
				sum.Phases.Close = time.Since(t0).Seconds()
				if b, ok := local.(*cache.Badger); ok { // store may be a remote tier over it
					sum.Compacted = b.CompactedOnClose()
					sum.MemosIndexed = b.MemoIndexed()
				}
				sum.WallSeconds = time.Since(processStart).Seconds()
			}
			printRecovery(a.stdout, recovery)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			store, err = a.remoteTier(ctx, store, offline)
			if err != nil {
				return &exitError{exitBadInput, err}
			}
			defer a.reportRemote(store)
			ctx, detachRun := context.WithCancel(ctx)
			defer detachRun()
			ex, bx := a.executor(g, detach, detachRun)
			if executorKind != "" && executorKind != "local" {
				if bx != nil {
					return &exitError{exitBadInput, fmt.Errorf("--executor %s: batch providers (batch = true) run in this process only; drop the flag or the batch setting", executorKind)}
				}
				var closeExecutor func()
				if ex, closeExecutor, err = a.newExecutor(ctx, executorKind, g.Exp.LLMProviders(), a.log); err != nil {
					return &exitError{exitBadInput, err}
				}
				defer closeExecutor()
			}
			e := &engine.Engine{Store: store, Log: a.log, Exec: ex,
				// The cache cut a damaged log on opening: trust no memo
				// unread, so every lost record is recomputed in this run.
				CheckRecords: recovery.RecordsUnreadable > 0}
			vars := variablesOf(g, a.vars, a.varFiles)
			opts := engine.RunOptions{Offline: offline, MaxCost: maxCost, AllowUnpriced: allowUnpriced, ReportDir: outDir,
				Variables: vars.Strings, VarValues: vars.Values, VarFiles: vars.Files, GitCommit: gitCommit(g.Exp.Dir),
				Started: processStart, LoadSeconds: time.Since(processStart).Seconds(), Version: versionString(),
				OnLock: a.lockWriter(g, outDir)}
			if isTerminal(a.stderr) {
				opts.OnProgress = progress(a.stderr)
			} else {
				opts.OnProgress = progressLog(a.log, 5*time.Second)
			}
			var sum *engine.Summary
			if g.Exp.StopWhen != nil {
				// Rounds of items until the stop_when rule stops (adaptive.go).
				g, sum, err = a.runAdaptive(ctx, e, g, opts)
			} else {
				sum, err = e.Run(ctx, g, opts)
			}
			inFlight := closeBatches(a, bx, err == nil)
			if sum != nil {
				config.WriteDiagnostics(a.stderr, config.Dedupe(sum.Warnings), g.Exp.Files)
			}
			var ie *engine.InputError
			if errors.As(err, &ie) {
				if len(ie.Diags) > 0 {
					config.WriteDiagnostics(a.stderr, ie.Diags, g.Exp.Files)
					if sum != nil && sum.Nodes.Ran > 0 {
						// A stage laid out once its inputs settled refused
						// them: what ran before is cached.
						return &exitError{exitBadInput, fmt.Errorf("the run stopped there; the %d node(s) that ran before are cached", sum.Nodes.Ran)}
					}
					return &exitError{exitBadInput, errors.New("nothing was run")}
				}
				return &exitError{exitBadInput, err}
			}
			if sum != nil {
				// The experiment's one page, after the reports it shows: a
				// report, so its time is the reports phase's. After a cold
				// run of 1M nodes it reads every item's results (1.5-4 min):
				// said while it happens, as the compaction is.
				t0 := time.Now()
				if sum.Nodes.Total >= pageNoticeNodes {
					a.log.Info().Int("nodes", sum.Nodes.Total).Msg("writing " + htmlPageName + " (reads the results it shows, unless the page is current)")
				}
				if page, herr := a.writeHTMLPage(g, store, sum, outDir); herr != nil {
					fmt.Fprintf(a.stderr, "warning: %s not written: %v\n", htmlPageName, herr)
				} else {
					sum.Reports = append(sum.Reports, page)
				}
				sum.Phases.Reports += time.Since(t0).Seconds()
				closeStore(sum)
				printSummary(a.stdout, g.StageOrder(), sum)
				if offline && sum.Unsaved > 0 && !errors.Is(err, cache.ErrDiskFull) {
					fmt.Fprintf(a.stderr, "note: %d deterministic node(s) computed in this run were not saved: --offline opens the cache read-only (a run without it saves them)\n", sum.Unsaved)
				}
				if summaryJSON != "" {
					b, _ := json.MarshalIndent(sum, "", "  ")
					if werr := os.WriteFile(summaryJSON, append(b, '\n'), 0o644); werr != nil {
						return &exitError{exitFailedNodes, fmt.Errorf("write summary: %w", werr)}
					}
				}
			}
			switch {
			case err != nil && errors.Is(err, cache.ErrDiskFull) && sum != nil:
				return &exitError{exitEnvironment, diskFullError(a.cacheDirPath(), sum)}
			case err != nil:
				return &exitError{exitFailedNodes, err}
			case bx != nil && bx.Detached():
				fmt.Fprintf(a.stdout, "detached: %s; run again to collect the answers (ideaflow batches lists them)\n", inFlight)
				return nil
			case sum.Interrupted:
				return &exitError{exitInterrupted, errors.New("interrupted: completed nodes are in the cache; run again to continue")}
			case sum.BudgetExhausted:
				return &exitError{exitBudget, fmt.Errorf("stopped by --max-cost $%g: %d node(s) not run; completed nodes are in the cache; raise the budget and run again to continue", maxCost, sum.Nodes.Skipped)}
			case sum.Nodes.Failed > 0:
				return &exitError{exitFailedNodes, fmt.Errorf("%d node(s) failed; run again to retry them", sum.Nodes.Failed)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&detach, "detach", false, "with providers that set batch = true: submit what is ready, collect the batches that ended, and exit instead of waiting for running batches (a later run collects them)")
	f.BoolVar(&offline, "offline", false, "fail before any call unless every model and service node is cached")
	f.BoolVar(&verify, "verify", false, "make no calls: recompute every cached deterministic node and compare it with the cache (exit 1 if any differs)")
	f.Float64Var(&maxCost, "max-cost", 0, "stop dispatching model calls when the next could take the run's cost past this many USD; refused when a call to make goes to a model without a price block")
	f.BoolVar(&allowUnpriced, "allow-unpriced", false, "with --max-cost: start although some calls go to models without a price (the budget counts priced calls only)")
	f.StringVar(&summaryJSON, "summary-json", "", "write the run summary as JSON to this file")
	f.StringVar(&outDir, "out", "", "folder for report files (default results/ beside a folder experiment's files, results/<file stem>/ beside a one-file experiment)")
	f.StringVar(&executorKind, "executor", "local", "where calls run: local; a nats:// URL (tasks go to the JetStream queue there, for the workers of `ideaflow worker`); or loopback (every task and result through JSON to a second in-process executor, as to a worker: a test seam)")
	a.addRemoteFlags(cmd)
	a.addVarFlags(cmd)
	return cmd
}

// printRecovery says what opening the cache found damaged and did about it.
func printRecovery(w io.Writer, r cache.Recovery) {
	if !r.Damaged() {
		return
	}
	for _, d := range r.Damage {
		fmt.Fprintf(w, "cache damaged: %s\n", d)
	}
	if r.ReadOnly {
		fmt.Fprintf(w, "cache opened read-only: read around the damage, changing nothing (%d record(s) unreadable); what the damaged files hold are misses until a run without --offline or --verify repairs them.\n", r.RecordsUnreadable)
		return
	}
	fmt.Fprintf(w, "cache repaired on opening: %d entr(ies) restored from the damaged files, %d unreadable record(s) dropped (this run recomputes those it needs), %d index entr(ies) dropped.\n",
		r.Restored, r.Repaired.Records, r.Repaired.Parts+r.Repaired.Latest+r.Repaired.Memos+r.Repaired.Index)
}

// diskFullError says what a run that filled the disk kept: the nodes it
// computed and saved, those it computed but could not save (deterministic
// ones, written behind: recomputed next time without a call), and those it
// did not run.
func diskFullError(dir string, sum *engine.Summary) error {
	saved := sum.Nodes.Ran - sum.Unsaved
	return fmt.Errorf("disk full at %s: %d node(s) computed and saved in this run (%d were cached already), %d computed but not saved, %d failed or not run; free space and run again: only what was not saved is computed again",
		dir, saved, sum.Nodes.Cached, sum.Unsaved, sum.Nodes.Failed+sum.Nodes.Skipped)
}

// verify recomputes the cached deterministic nodes and reports any whose
// output differs from the cache: a stage changed without a Version bump.
func (a *app) verify(g *engine.Graph, store cache.Store) error {
	rep := (&engine.Engine{Store: store, Log: a.log}).Verify(g)
	for _, m := range rep.Mismatches {
		if m.Error != "" {
			fmt.Fprintf(a.stdout, "  DIFFERS %s: recomputing failed: %s\n", m.Address, m.Error)
		} else {
			fmt.Fprintf(a.stdout, "  DIFFERS %s (cached key %s)\n", m.Address, m.Key)
		}
	}
	if len(rep.Mismatches) > 0 {
		return &exitError{exitFailedNodes, fmt.Errorf("%d of %d cached deterministic node(s) differ when recomputed: a stage type changed its outputs without a Version bump; bump it (or clear those records) so the cache recomputes them", len(rep.Mismatches), rep.Verified)}
	}
	fmt.Fprintf(a.stdout, "verified %d cached deterministic node(s): all equal their cached outputs.\n", rep.Verified)
	return nil
}

// modelCallsText says how many model requests go (or went) out and, when
// samples ride as n choices of a shared request, how many samples they
// carry: "200 requests, 1,000 samples", never "1000 model calls" for 200
// requests. One sample per request keeps "N model calls".
func modelCallsText(requests, samples int) string {
	if requests == samples {
		return fmt.Sprintf("%d model calls", samples)
	}
	return fmt.Sprintf("%s requests, %s samples", groupThousands(requests), groupThousands(samples))
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func printSummary(w io.Writer, order []string, s *engine.Summary) {
	for _, k := range order {
		c := s.Stages[k]
		fmt.Fprintf(w, "  %-56s %6d cached  %6d ran  %4d failed  %4d skipped\n", k, c.Cached, c.Ran, c.Failed, c.Skipped)
		printDrops(w, c.Drops)
	}
	services := ""
	if s.ServiceCalls > 0 {
		services = fmt.Sprintf(", %d service calls", s.ServiceCalls)
	}
	ph := s.Phases
	closing := ""
	// Closing is named when it compacted the cache or indexed its memos;
	// otherwise it takes milliseconds.
	switch {
	case s.Compacted && s.MemosIndexed > 0:
		closing = fmt.Sprintf(", compacting the cache and indexing %d memos %.1f", s.MemosIndexed, ph.Close)
	case s.Compacted:
		closing = fmt.Sprintf(", compacting the cache %.1f", ph.Close)
	case s.MemosIndexed > 0:
		closing = fmt.Sprintf(", indexing %d memos %.1f", s.MemosIndexed, ph.Close)
	}
	tokens := fmt.Sprintf("%d+%d tokens", s.Tokens.Input, s.Tokens.Output)
	if s.Tokens.Cached > 0 {
		tokens = fmt.Sprintf("%d+%d tokens (%d input from prompt caches)", s.Tokens.Input, s.Tokens.Output, s.Tokens.Cached)
	}
	fmt.Fprintf(w, "%d nodes: %d cached, %d ran, %d failed, %d skipped. %s%s, %s, %s, %.1fs (load %.1f, plan %.1f, run %.1f, reports %.1f%s).\n",
		s.Nodes.Total, s.Nodes.Cached, s.Nodes.Ran, s.Nodes.Failed, s.Nodes.Skipped,
		modelCallsText(s.Requests, s.LLMCalls), services, tokens, costFigure("", s.CostUSD, s.Unpriced), s.WallSeconds, ph.Load, ph.Plan, ph.Run, ph.Reports, closing)
	for _, p := range slices.Sorted(maps.Keys(s.Unavailable)) {
		fmt.Fprintf(w, "provider %s unavailable: %d node(s) not run (%s)\n", p, s.Skipped["provider unavailable"], s.Unavailable[p])
	}
	if s.Repaired > 0 {
		fmt.Fprintf(w, "repaired %d damaged cache record(s): their nodes were recomputed and the records replaced.\n", s.Repaired)
	}
	if e := s.Earlier; e != nil {
		fmt.Fprintf(w, "%d call(s) answered by an earlier coordinator (results its workers stored before this run asked): %d+%d tokens, %s, paid then, not counted above.\n",
			e.Calls, e.Tokens.Input, e.Tokens.Output, costFigure("", e.CostUSD, s.Unpriced))
	}
	if s.AnswersReused > 0 {
		fmt.Fprintf(w, "%d node(s) re-derived their output from the cached answer to the same request (only output settings changed): no call.\n", s.AnswersReused)
	}
	if s.Deduplicated > 0 {
		fmt.Fprintf(w, "%d node(s) shared another node's identical request: sent once.\n", s.Deduplicated)
	}
	for i, f := range s.Failures {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more failures\n", len(s.Failures)-10)
			break
		}
		fmt.Fprintf(w, "  FAILED %s: %s\n", f.Address, f.Error)
	}
	for _, line := range servedModelNotes(s.ServedModels) {
		fmt.Fprintln(w, line)
	}
	if s.BudgetExhausted {
		fmt.Fprintln(w, "Budget reached (--max-cost): remaining model nodes were not dispatched.")
	}
	if some, all, text := syntheticOf(s); all {
		fmt.Fprintln(w, "SYNTHETIC: answers came from the mock provider; they are not real model output.")
	} else if some {
		fmt.Fprintf(w, "PARTLY SYNTHETIC: %s; the reports mark what rests on them.\n", text)
	}
	for _, r := range s.Reports {
		fmt.Fprintf(w, "wrote %s\n", r)
	}
}

// servedModelNotes says when an endpoint answered a requested model name with
// other models, e.g. when an alias moved on between the cached and new answers.
func servedModelNotes(served map[string]map[string]int) []string {
	var out []string
	for _, req := range slices.Sorted(maps.Keys(served)) {
		names := served[req]
		if len(names) == 1 && names[req] > 0 {
			continue
		}
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(names)) {
			parts = append(parts, fmt.Sprintf("%s (%d)", name, names[name]))
		}
		out = append(out, fmt.Sprintf("note: answers for model %q came from %s", req, strings.Join(parts, ", ")))
	}
	return out
}

// variableStrings are the experiment's variable values as reports and
// records show them, a value that holds a secret withheld (runvars.go).
func variableStrings(g *engine.Graph) map[string]string {
	return variablesOf(g, nil, nil).Strings
}

func gitCommit(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (a *app) graphCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "graph [EXPERIMENT]",
		Short: "Print the stage-level DAG as Graphviz dot or Mermaid",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			if err := g.WriteGraph(a.stdout, format); err != nil {
				return &exitError{exitBadInput, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "dot", "dot or mermaid")
	a.addVarFlags(cmd)
	return cmd
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(a.stdout, "ideaflow %s\n", versionString())
		},
	}
}

// versionString is the build's version: set by the Makefile, else the VCS
// revision Go recorded, else "dev".
func versionString() string {
	if version != "" {
		return version
	}
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v = "dev+" + s.Value[:12]
			}
		}
	}
	return v
}
