package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/engine/executor/jetstream"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// natsTokenEnv holds the token a server demands and clients present: the
// queue runs whatever task it is given with the workers' API keys, so who
// may publish must be restricted once the server listens beyond localhost.
const natsTokenEnv = "IDEAFLOW_NATS_TOKEN"

func isNATSURL(s string) bool {
	return strings.HasPrefix(s, "nats://") || strings.HasPrefix(s, "tls://")
}

// connectNATS connects to url (reconnecting for ever: a worker outlives a
// server restart), with the token of $IDEAFLOW_NATS_TOKEN when set.
func connectNATS(rawURL, name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1)}
	if tok := os.Getenv(natsTokenEnv); tok != "" {
		opts = append(opts, nats.Token(tok))
	}
	nc, err := nats.Connect(rawURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", redactURL(rawURL), err)
	}
	return nc, nil
}

// redactURL drops credentials from a URL before it is printed.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the NATS URL"
	}
	u.User = nil
	return u.String()
}

// workerExecutor makes a worker's executor: it knows no provider (each
// task carries its settings, secrets by the names of their environment
// variables, read here), and its clients wait on the limits shared in the
// queue's KV bucket before each request.
func workerExecutor(q *jetstream.Queue, log zerolog.Logger, allowed []string, opts ...llm.Option) func() executor.Executor {
	return func() executor.Executor {
		ex := engine.NewLocalExecutor(nil, log, append([]llm.Option{llm.WithSharedLimits(q.SharedLimits)}, opts...)...)
		if len(allowed) == 0 {
			return ex
		}
		return &endpointGuard{Executor: ex, allowed: allowed}
	}
}

// endpointGuard refuses tasks whose provider's base URL is not one the
// worker was told to send to: a task names the endpoint and the variable
// holding the key, so whoever can publish could otherwise have the
// worker send its key anywhere.
type endpointGuard struct {
	executor.Executor
	allowed []string
}

func (g *endpointGuard) Execute(ctx context.Context, t *executor.Task) (*executor.Result, error) {
	if t.Settings != nil && t.Settings.BaseURL != "" {
		ok := false
		for _, a := range g.allowed {
			if strings.HasPrefix(t.Settings.BaseURL, a) {
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("task %s: this worker sends to no endpoint at %s (see its --allow-endpoint)", t.Address, t.Settings.BaseURL)
		}
	}
	return g.Executor.Execute(ctx, t)
}

func (a *app) workerCmd() *cobra.Command {
	var connect string
	var concurrency int
	var ackWait, retryUnavailable time.Duration
	var allowed []string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the call tasks of `ideaflow run --executor nats://...` from a NATS JetStream queue",
		Long: `Run the call tasks of ` + "`ideaflow run --executor nats://...`" + ` from a NATS JetStream queue
(` + "`ideaflow server`" + `, or any NATS server with JetStream). Each task names its
provider's endpoint and the environment variables holding its secrets: set them
in this worker's environment. Results go to the queue's results store before the
task is acked, so a worker that dies leaves its task to another (after
--ack-wait) and no answer is paid twice. Requests per minute and tokens per
minute of a provider hold for all workers together (a shared limit per endpoint
and key variable). Ctrl-C stops the worker; tasks in flight go back to the queue.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !isNATSURL(connect) {
				return &exitError{exitBadInput, fmt.Errorf("--connect %q: want a nats:// URL", connect)}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			nc, err := connectNATS(connect, "ideaflow worker")
			if err != nil {
				return &exitError{exitEnvironment, err}
			}
			defer nc.Close()
			q, err := jetstream.Open(ctx, nc, jetstream.Config{AckWait: ackWait})
			if err != nil {
				return &exitError{exitEnvironment, err}
			}
			w := jetstream.NewWorker(q, workerExecutor(q, a.log, allowed), concurrency, a.log)
			w.RetryUnavailableAfter = retryUnavailable
			fmt.Fprintf(a.stdout, "Worker on %s: up to %d task(s) at once; Ctrl-C stops it\n", redactURL(connect), concurrency)
			err = w.Run(ctx)
			st := w.Stats()
			fmt.Fprintf(a.stdout, "Worker stopped: %d task(s) run, %d found answered already, %d left to the queue\n", st.Ran, st.Reused, st.Abandoned)
			if err != nil && !errors.Is(err, context.Canceled) {
				return &exitError{exitEnvironment, err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&connect, "connect", "nats://127.0.0.1:4222", "the NATS server's URL (the token of $"+natsTokenEnv+" is presented when set)")
	f.IntVar(&concurrency, "concurrency", 32, "tasks run at once (each provider's max_concurrency still bounds its calls)")
	f.DurationVar(&ackWait, "ack-wait", 2*time.Minute, "how long a task taken by a worker that stopped answering waits before another worker gets it (a live worker's long call is not redelivered)")
	f.DurationVar(&retryUnavailable, "retry-unavailable-after", time.Minute, "how long a provider found unavailable (a refused key, an exhausted quota) stays so for every worker before a task of it is sent again")
	f.StringArrayVar(&allowed, "allow-endpoint", nil, "send only to base URLs starting with this (repeatable; default: any endpoint a task names)")
	return cmd
}

func (a *app) serverCmd() *cobra.Command {
	var listen, dataDir string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a NATS server with JetStream for `ideaflow worker` and `ideaflow run --executor nats://...`",
		Long: `Run a NATS server with JetStream in this process, storing its queue and results
under --data-dir, for ` + "`ideaflow worker --connect`" + ` and ` + "`ideaflow run --executor`" + `.
An existing NATS cluster with JetStream serves as well. With $` + natsTokenEnv + ` set,
the server demands that token of every client (workers and runs present it);
set it before listening beyond localhost: whoever can publish a task has the
workers send it with their keys.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataDir == "" {
				return &exitError{exitBadInput, errors.New("--data-dir: give the folder the server stores its queue and results in")}
			}
			s, err := jetstream.StartServer(listen, dataDir, os.Getenv(natsTokenEnv))
			if err != nil {
				return &exitError{exitEnvironment, err}
			}
			defer s.Stop()
			fmt.Fprintf(a.stdout, "NATS server with JetStream on %s (data: %s)\n", s.URL(), dataDir)
			fmt.Fprintf(a.stdout, "  workers: ideaflow worker --connect %s\n  runs:    ideaflow run EXPERIMENT --executor %s\n", s.URL(), s.URL())
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			fmt.Fprintln(a.stdout, "Server stopping")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:4222", "host:port to listen on (0.0.0.0:4222 for other machines; set $"+natsTokenEnv+" then)")
	f.StringVar(&dataDir, "data-dir", "", "folder for the server's JetStream data (the queue, results and shared limits)")
	return cmd
}
