// Package jetstream runs call tasks on a fleet of workers over NATS
// JetStream: a coordinator (the engine's Wire executor, with Coordinator.Send
// as its Transport) publishes each task to a work-queue stream, workers
// pull-consume it, run it with a local executor and put the encoded result
// (a failure envelope included) in a KV bucket keyed by the task's id, and
// only then ack. The coordinator waits for that key.
//
// Invariants the design rests on:
//   - A task's id is its node key (with its sample indexes when it carries
//     several): the message id (Nats-Msg-Id, so JetStream drops a duplicate
//     publish within the stream's duplicate window) and the result's key.
//   - A result is durable before its task is acked: a worker that dies before
//     the ack leaves the task to be redelivered after AckWait; one that dies
//     after the put but before the ack leaves a result the next worker finds
//     and acks without calling the provider again.
//   - A successful result in the bucket is served to any coordinator that
//     asks for its id, a restarted one included, without a publish: an
//     answer a worker got after its coordinator died is not paid twice. A
//     failure is not: it answers the coordinator that was waiting for it,
//     and a later ask publishes again (as a local run retries failed nodes).
//   - Nothing secret travels: tasks carry the names of the environment
//     variables that hold keys (executor.Task.Settings), workers read them.
//
// The package imports neither HCL nor Badger (TestImports), as the
// executor it builds on.
package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of what the queue creates on the server; every coordinator and
// worker of one fleet uses the same ones.
const (
	StreamName    = "IDEAFLOW_TASKS"
	Subject       = "ideaflow.tasks"
	ConsumerName  = "ideaflow-workers"
	ResultsBucket = "ideaflow-results"
	LimitsBucket  = "ideaflow-limits"
	// HeaderResult names the result key on a task message: the message id
	// differs from it when a failed result is asked again (see Send).
	HeaderResult = "Ideaflow-Result"
)

// Config sets the queue's timings; zero values take the defaults.
type Config struct {
	// AckWait is how long a task taken by a worker that stopped answering
	// (no ack, no progress signal) waits before it is delivered again. A
	// live worker signals progress every AckWait/3, so a long call is not
	// redelivered. Default 2 minutes; set, it updates the consumer's.
	AckWait time.Duration
	// Duplicates is the window in which a second publish of one id is
	// dropped. Default 2 minutes (JetStream's).
	Duplicates time.Duration
	// ResultsTTL is how long results stay in the bucket. Default 24 hours.
	ResultsTTL time.Duration
	// Storage of the stream and buckets: file (default) or memory.
	Memory bool
}

func (c Config) withDefaults() Config {
	if c.AckWait <= 0 {
		c.AckWait = 2 * time.Minute
	}
	if c.Duplicates <= 0 {
		c.Duplicates = 2 * time.Minute
	}
	if c.ResultsTTL <= 0 {
		c.ResultsTTL = 24 * time.Hour
	}
	return c
}

// Queue is the stream, its consumer and the two buckets on one connection.
type Queue struct {
	JS      jetstream.JetStream
	Stream  jetstream.Stream
	Results jetstream.KeyValue
	Limits  jetstream.KeyValue
	cfg     Config
}

// Open creates (or finds) the queue's stream, consumer and buckets:
// idempotent, so coordinators and workers may start in any order.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Queue, error) {
	explicitAckWait := cfg.AckWait > 0
	cfg = cfg.withDefaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	storage := jetstream.FileStorage
	if cfg.Memory {
		storage = jetstream.MemoryStorage
	}
	// What exists is left as it is (an operator may have made the stream
	// and buckets with replicas on a cluster): created when missing, with
	// cfg; found, checked for what the queue relies on.
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: StreamName, Subjects: []string{Subject}, Retention: jetstream.WorkQueuePolicy,
		Duplicates: cfg.Duplicates, Storage: storage,
	})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		st, err = js.Stream(ctx, StreamName)
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: stream %s: %w", StreamName, err)
	}
	if c := st.CachedInfo().Config; c.Retention != jetstream.WorkQueuePolicy || c.Duplicates <= 0 || !slices.Contains(c.Subjects, Subject) {
		return nil, fmt.Errorf("jetstream: stream %s exists but is no work queue with a duplicate window on subject %s (retention %v, duplicates %v, subjects %v)",
			StreamName, Subject, c.Retention, c.Duplicates, c.Subjects)
	}
	// An AckWait given explicitly (a worker's --ack-wait) sets the
	// consumer's; otherwise an existing consumer is left as it is, so a
	// coordinator does not undo the setting of the workers.
	cc := jetstream.ConsumerConfig{Durable: ConsumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.AckWait, MaxAckPending: -1}
	if explicitAckWait {
		_, err = st.CreateOrUpdateConsumer(ctx, cc)
	} else if _, err = st.CreateConsumer(ctx, cc); errors.Is(err, jetstream.ErrConsumerExists) {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: consumer %s: %w", ConsumerName, err)
	}
	results, err := bucket(ctx, js, jetstream.KeyValueConfig{Bucket: ResultsBucket, History: 1, TTL: cfg.ResultsTTL, Storage: storage})
	if err != nil {
		return nil, err
	}
	limits, err := bucket(ctx, js, jetstream.KeyValueConfig{Bucket: LimitsBucket, History: 1, Storage: storage})
	if err != nil {
		return nil, err
	}
	return &Queue{JS: js, Stream: st, Results: results, Limits: limits, cfg: cfg}, nil
}

// bucket creates a KV bucket with cfg, or finds it as it is.
func bucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) {
		kv, err = js.KeyValue(ctx, cfg.Bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// Consumer is the workers' durable pull consumer.
func (q *Queue) Consumer(ctx context.Context) (jetstream.Consumer, error) {
	c, err := q.Stream.Consumer(ctx, ConsumerName)
	if err != nil {
		return nil, fmt.Errorf("jetstream: consumer %s: %w", ConsumerName, err)
	}
	return c, nil
}

var plainKey = regexp.MustCompile(`^[0-9a-zA-Z_-]{1,200}$`)

// TaskID is the id of a task: its node key, which a KV key and a message
// id can carry as it is when it is plain; a task asking for several
// samples in one request (its key is its first sample's) adds them, since
// a sample the batch left unanswered is later sent alone under that key.
func TaskID(key string, samples []int) string {
	if len(samples) <= 1 && plainKey.MatchString(key) {
		return key
	}
	var b strings.Builder
	b.WriteString(key)
	for _, s := range samples {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(s))
	}
	h := sha256.Sum256([]byte(b.String()))
	return "t" + hex.EncodeToString(h[:])
}

// Starved says whether tasks are waiting with no worker to take them:
// some pending, none taken and unacked, no worker's pull request open. A
// coordinator waits for workers without limit; this is what it can tell
// its user meanwhile.
func (q *Queue) Starved(ctx context.Context) (pending uint64, starved bool, err error) {
	c, err := q.Consumer(ctx)
	if err != nil {
		return 0, false, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("jetstream: consumer %s: %w", ConsumerName, err)
	}
	return info.NumPending, info.NumPending > 0 && info.NumAckPending == 0 && info.NumWaiting == 0, nil
}
