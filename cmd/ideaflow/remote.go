package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/cache/remote"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/engine/executor/jetstream"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// newExecutor is the executor run --executor names: "" or "local" calls the
// providers in-process; "loopback" sends every task through JSON to a
// second in-process executor and its result (or failure envelope) back, as
// a worker on another machine would: the seam's end-to-end check; a
// nats:// URL publishes every task to the JetStream queue there, for the
// workers of `ideaflow worker` (issue 27). The function returned ends
// what the executor opened, saying what it did.
func (a *app) newExecutor(ctx context.Context, kind string, providers map[string]llm.Provider, log zerolog.Logger) (engine.Executor, func(), error) {
	local := engine.NewLocalExecutor(providers, log)
	switch {
	case kind == "" || kind == "local":
		return local, func() {}, nil
	case kind == "loopback":
		// The worker side knows no provider: each task carries its settings.
		worker := engine.NewLocalExecutor(nil, log)
		return executor.NewWire(executor.ServeWith(worker), local), func() {}, nil
	case isNATSURL(kind):
		nc, err := connectNATS(kind, "ideaflow run")
		if err != nil {
			return nil, nil, err
		}
		q, err := jetstream.Open(ctx, nc, jetstream.Config{})
		if err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("--executor %s: %w", redactURL(kind), err)
		}
		coord := jetstream.NewCoordinator(q)
		fmt.Fprintf(a.stdout, "Calls run on the workers of %s (ideaflow worker --connect ...)\n", redactURL(kind))
		stopWatch := a.watchStarved(ctx, q, kind)
		done := func() {
			stopWatch()
			if !coord.Close(15 * time.Second) {
				fmt.Fprintln(a.stderr, "warning: some tasks were still being withdrawn from the queue when the run ended; workers may run them (the next run reads their results)")
			}
			st := coord.Stats()
			fmt.Fprintf(a.stdout, "Queue %s: %d task(s) published (%d dropped as duplicates), %d answered from its results store",
				redactURL(kind), st.Published, st.Duplicates, st.FromStore)
			if st.Withdrawn > 0 {
				fmt.Fprintf(a.stdout, ", %d withdrawn before a worker took them (the run stopped waiting)", st.Withdrawn)
			}
			fmt.Fprintln(a.stdout)
			nc.Close()
		}
		// The workers read the keys: this process needs none.
		return executor.NewWire(coord.Send, local).WithKeysElsewhere(), done, nil
	}
	return nil, nil, fmt.Errorf("--executor %q: want local, loopback or a nats:// URL", kind)
}

// starvedEvery is how often a run on a queue checks that some worker
// takes its tasks.
var starvedEvery = 15 * time.Second

// watchStarved warns, once, when the run's tasks wait in the queue and no
// worker is there to take them: the run waits for workers without limit.
func (a *app) watchStarved(ctx context.Context, q *jetstream.Queue, url string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(starvedEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if n, starved, err := q.Starved(ctx); err == nil && starved {
				fmt.Fprintf(a.stderr, "warning: %d task(s) wait in the queue and no worker is taking them: start one with `ideaflow worker --connect %s`\n", n, redactURL(url))
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// addRemoteFlags adds run's flags for the scale-out seams.
func (a *app) addRemoteFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.cacheRemote, "cache-remote", "", "a shared record store under the local cache, s3://bucket/prefix: records missing locally are read from it, new ones written to it once (credentials from the standard AWS chain)")
	cmd.Flags().StringVar(&a.cacheRemoteEndpoint, "cache-remote-endpoint", "", "base URL of an S3-compatible service other than AWS (default $IDEAFLOW_CACHE_REMOTE_ENDPOINT)")
}

// remoteTier puts --cache-remote under store. --offline reads the remote
// too (records are immutable; reading one is no call) but the local cache
// is read-only then, so what it reads serves nothing: it is left off.
func (a *app) remoteTier(ctx context.Context, store cache.Store, offline bool) (cache.Store, error) {
	if a.cacheRemote == "" || offline {
		return store, nil
	}
	endpoint := a.cacheRemoteEndpoint
	if endpoint == "" {
		endpoint = os.Getenv("IDEAFLOW_CACHE_REMOTE_ENDPOINT")
	}
	obj, err := remote.OpenS3(ctx, a.cacheRemote, endpoint)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(a.stdout, "Remote cache: %s\n", obj.Where())
	return remote.New(ctx, store, obj, a.log), nil
}

// reportRemote says what the remote tier did; a corrupt object is named
// by count here and by key in the log.
func (a *app) reportRemote(store cache.Store) {
	t, ok := store.(*remote.Tier)
	if !ok {
		return
	}
	st := t.RemoteStats()
	fmt.Fprintf(a.stdout, "Remote cache %s: %d record(s) read, %d written (%d already there)", t.Where(), st.Hits, st.Written, st.Present)
	if st.Corrupt > 0 {
		fmt.Fprintf(a.stdout, ", %d corrupt object(s) ignored (recomputed)", st.Corrupt)
	}
	if st.ReadErrors+st.WriteErrors > 0 {
		fmt.Fprintf(a.stdout, ", %d read and %d write error(s) (see the log)", st.ReadErrors, st.WriteErrors)
	}
	fmt.Fprintln(a.stdout)
}
