package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
)

// memObjects is an object store in memory that counts its calls.
type memObjects struct {
	mu         sync.Mutex
	m          map[string][]byte
	gets, puts int
}

func (o *memObjects) Get(_ context.Context, name string) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gets++
	b, ok := o.m[name]
	if !ok {
		return nil, ErrMissing
	}
	return b, nil
}

func (o *memObjects) PutIfAbsent(_ context.Context, name string, body []byte) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.puts++
	if _, ok := o.m[name]; ok {
		return false, nil
	}
	o.m[name] = body
	return true, nil
}

func (o *memObjects) Where() string { return "memory" }

func record(i int) *cache.Record {
	key := fmt.Sprintf("%064x", i+1)
	out := []byte(fmt.Sprintf(`{"idea":"idea %d"}`, i))
	return &cache.Record{Key: key, Address: fmt.Sprintf("stage.x/a%d", i), Output: out, OutputDigest: cache.DigestOutput(out),
		Raw: "raw", Parts: []cache.Part{{Name: "p", Digest: "d"}}}
}

func TestNameIsSharded(t *testing.T) {
	k := "0a4a08f90e0f5be3eb9e0b968df0f264c3806fb9f462386e5abbe9c49ad04be2"
	if got := Name(k); got != "r/0a/4a/"+k {
		t.Fatalf("Name = %s", got)
	}
}

// Two caches on one remote: what one writes the other reads (then from its
// own local store), each record is written once, and a damaged object is
// a miss that is counted, never an answer.
func TestTierReadThroughWriteOnce(t *testing.T) {
	obj := &memObjects{m: map[string][]byte{}}
	a := New(context.Background(), cache.NewMemory(), obj, zerolog.Nop())
	b := New(context.Background(), cache.NewMemory(), obj, zerolog.Nop())
	for i := 0; i < 3; i++ {
		if err := a.PutIndexed(record(i), "", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Put(record(0)); err != nil { // b computed one of them too
		t.Fatal(err)
	}
	if st := a.RemoteStats(); st.Written != 3 || len(obj.m) != 3 {
		t.Fatalf("a: %+v, %d objects", st, len(obj.m))
	}
	if st := b.RemoteStats(); st.Written != 0 || st.Present != 1 {
		t.Fatalf("b wrote a record a had written: %+v", st)
	}
	got, err := b.Get(record(1).Key)
	if err != nil || string(got.Output) != string(record(1).Output) || got.Address != record(1).Address {
		t.Fatalf("b.Get = %+v, %v", got, err)
	}
	parts, err := b.Parts(record(2).Key)
	if err != nil || len(parts) != 1 || parts[0].Name != "p" {
		t.Fatalf("b.Parts = %v, %v", parts, err)
	}
	gets := obj.gets
	if _, err := b.Get(record(1).Key); err != nil || obj.gets != gets {
		t.Fatalf("a second read went to the remote (%d gets, then %d): %v", gets, obj.gets, err)
	}
	if _, err := b.Get(fmt.Sprintf("%064x", 999)); !errors.Is(err, cache.ErrNotFound) {
		t.Fatalf("absent everywhere: %v", err)
	}

	// Damage: a flipped byte, another key's record, an output that is not
	// the one its digest names. Each is a miss on a fresh cache.
	good, _ := Encode(record(5))
	other, _ := Encode(record(6))
	r7 := record(7)
	r7.OutputDigest = cache.DigestOutput([]byte("something else"))
	wrongOutput, _ := Encode(r7)
	obj.m[Name(record(5).Key)] = []byte(strings.Replace(string(good), "stage.x/a5", "stage.x/a9", 1))
	obj.m[Name(record(6).Key)] = other
	obj.m[Name(record(8).Key)] = other // holds record 6
	obj.m[Name(r7.Key)] = wrongOutput
	c := New(context.Background(), cache.NewMemory(), obj, zerolog.Nop())
	for _, k := range []string{record(5).Key, record(8).Key, r7.Key} {
		if _, err := c.Get(k); !errors.Is(err, cache.ErrNotFound) {
			t.Errorf("corrupt %s: %v, want a miss", k, err)
		}
	}
	if _, err := c.Get(record(6).Key); err != nil {
		t.Errorf("intact record 6: %v", err)
	}
	if st := c.RemoteStats(); st.Corrupt != 3 || st.Hits != 1 {
		t.Errorf("stats %+v, want 3 corrupt, 1 hit", st)
	}
}

// fakeS3 is gofakes3 in-process with dummy credentials in the environment.
func fakeS3(tb testing.TB) *S3 {
	tb.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("lab"); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	tb.Cleanup(srv.Close)
	tb.Setenv("AWS_ACCESS_KEY_ID", "AKIDTESTTESTTEST")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	tb.Setenv("AWS_REGION", "us-east-1")
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	tb.Setenv("AWS_CONFIG_FILE", filepath.Join(tb.TempDir(), "none"))
	tb.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(tb.TempDir(), "none"))
	s, err := OpenS3(context.Background(), "s3://lab/team/", srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// The S3 store honours write-once: a second PutIfAbsent of a name leaves
// the first body; an absent name is ErrMissing.
func TestS3WriteOnce(t *testing.T) {
	s := fakeS3(t)
	ctx := context.Background()
	if _, err := s.Get(ctx, "r/00/00/x"); !errors.Is(err, ErrMissing) {
		t.Fatalf("absent: %v", err)
	}
	for i, want := range []bool{true, false} {
		created, err := s.PutIfAbsent(ctx, "r/00/00/x", []byte(fmt.Sprintf("body %d", i)))
		if err != nil || created != want {
			t.Fatalf("put %d: created %v, %v; want %v", i, created, err, want)
		}
	}
	b, err := s.Get(ctx, "r/00/00/x")
	if err != nil || string(b) != "body 0" {
		t.Fatalf("Get = %q, %v", b, err)
	}
	if _, err := OpenS3(ctx, "https://lab/team", ""); err == nil {
		t.Fatal("a non-s3 URL was accepted")
	}
}

// BenchmarkWarmGet reads n records: "off" from the local store alone (no
// tier), "local" through the tier with every record local (the remote is
// never asked: a warm run with --cache-remote on), "remote" through the
// tier on a fresh local store, each record read through from gofakes3 over
// HTTP (a warm run on a new machine). local/off is the tier's overhead on
// a warm run; remote/off is what a first run on a new machine pays per
// lookup.
func BenchmarkWarmGet(b *testing.B) {
	const n = 200
	s := fakeS3(b)
	seed := New(context.Background(), cache.NewMemory(), s, zerolog.Nop())
	for i := 0; i < n; i++ {
		if err := seed.Put(record(i)); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"off", "local", "remote"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				var t cache.Records = seed
				switch mode {
				case "off":
					t = seed.Store
				case "remote":
					t = New(context.Background(), cache.NewMemory(), s, zerolog.Nop())
				}
				for i := 0; i < n; i++ {
					if _, err := t.Get(record(i).Key); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
		})
	}
}

// Memos are the local store's: the tier reads them in place (MemoView),
// and a memo another tier on the same remote wrote is not seen.
func TestTierMemosAreLocal(t *testing.T) {
	obj := &memObjects{m: map[string][]byte{}}
	a := New(context.Background(), cache.NewMemory(), obj, zerolog.Nop())
	b := New(context.Background(), cache.NewMemory(), obj, zerolog.Nop())
	if err := a.SetMemo("in1", []byte("rec1\x00rest")); err != nil {
		t.Fatal(err)
	}
	var got []byte
	if ok, err := a.MemoView("in1", func(v []byte) { got = bytes.Clone(v) }); !ok || err != nil || string(got) != "rec1\x00rest" {
		t.Fatalf("MemoView = %q, %v, %v", got, ok, err)
	}
	if ok, err := b.MemoView("in1", func([]byte) {}); ok || err != nil {
		t.Fatalf("another tier's memo was seen: %v, %v", ok, err)
	}
}
