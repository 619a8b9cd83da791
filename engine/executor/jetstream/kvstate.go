package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ideaflow/ideaflow/engine/executor/ratelimit"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// KVState is a ratelimit.State on one key of a JetStream KV bucket: the
// key's revision is the compare-and-set token (Create for revision 0,
// Update at the revision read otherwise), so limiters in any number of
// processes share one theoretical arrival time.
type KVState struct {
	kv  jetstream.KeyValue
	key string
}

// NewKVState is the state at key of kv.
func NewKVState(kv jetstream.KeyValue, key string) *KVState { return &KVState{kv: kv, key: key} }

func (s *KVState) Load(ctx context.Context) ([]byte, uint64, error) {
	e, err := s.kv.Get(ctx, s.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", s.key, err)
	}
	return e.Value(), e.Revision(), nil
}

func (s *KVState) CompareAndSet(ctx context.Context, v []byte, rev uint64) (bool, error) {
	var err error
	if rev == 0 {
		_, err = s.kv.Create(ctx, s.key, v)
	} else {
		_, err = s.kv.Update(ctx, s.key, v, rev)
	}
	if err == nil {
		return true, nil
	}
	var apiErr *jetstream.APIError
	if errors.Is(err, jetstream.ErrKeyExists) ||
		(errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)) {
		return false, nil // another writer was first
	}
	return false, fmt.Errorf("writing %s: %w", s.key, err)
}

// LimitKey is the bucket key of a provider's shared limit of one kind
// ("requests" or "tokens"): a digest of who is limited, the kind of
// provider, its endpoint and the NAME of the environment variable holding
// its key. The key's value is never read here, so nothing secret reaches
// the bucket; two variables holding one key get two limits.
func LimitKey(p llm.Provider, unit string) string { return "limit." + identity(p) + "." + unit }

// identity names who a provider's limits and availability belong to.
func identity(p llm.Provider) string {
	h := sha256.Sum256([]byte(p.Kind + "\x00" + p.BaseURL + "\x00" + p.APIKeyEnv))
	return hex.EncodeToString(h[:12])
}

// SharedLimits is the llm option's factory of shared limits over q's
// limits bucket: for a provider that sets requests_per_minute or
// tokens_per_minute, one GCRA of each over its LimitKey (carrying the 429
// slowdown too), so every worker of the fleet together keeps to the
// provider's limits (each worker's own limiter still keeps them locally);
// and for every provider its breaker's count of failures (LimitKey
// "health"), so breaker_failures failures in total across the workers
// trip every worker's breaker.
func (q *Queue) SharedLimits(p llm.Provider) (llm.SharedLimit, error) {
	return SharedLimitsOver(func(key string) ratelimit.State { return NewKVState(q.Limits, key) })(p)
}

// SharedLimitsOver is SharedLimits over any state (tests use memory).
func SharedLimitsOver(state func(key string) ratelimit.State) func(llm.Provider) (llm.SharedLimit, error) {
	return SharedLimitsAt(state, nil)
}

// SharedLimitsAt is SharedLimitsOver on clock (nil: the wall clock, which
// every sharer must use in production: the shared times are absolute).
// Tests give a fake one.
func SharedLimitsAt(state func(key string) ratelimit.State, clock ratelimit.Clock) func(llm.Provider) (llm.SharedLimit, error) {
	return func(p llm.Provider) (llm.SharedLimit, error) {
		var now func() time.Time
		if clock != nil {
			now = clock.Now
		}
		s := ratelimit.Shared{Clock: clock, Health: ratelimit.NewHealth(state(LimitKey(p, "health")), now)}
		var err error
		if p.RequestsPerMinute > 0 {
			if s.Requests, err = ratelimit.New(state(LimitKey(p, "requests")), ratelimit.Limit{PerMinute: p.RequestsPerMinute}, now); err != nil {
				return nil, err
			}
		}
		if p.TokensPerMinute > 0 {
			if s.Tokens, err = ratelimit.New(state(LimitKey(p, "tokens")), ratelimit.Limit{PerMinute: p.TokensPerMinute}, now); err != nil {
				return nil, err
			}
		}
		return &s, nil
	}
}
