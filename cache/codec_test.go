package cache

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRecordCodecRoundTrip(t *testing.T) {
	full := sampleRecord(7)
	full.Reasoning = "first, consider the catalyst; then Δ and 漢字"
	full.Attempts = []Attempt{
		{Error: "429 too many requests", Status: 429, Duration: 15},
		{Raw: "not json", Status: 200, Repair: true, Duration: 900},
		{Raw: "{}", Status: 200, Duration: -1},
	}
	tests := []struct {
		name   string
		rec    *Record
		format byte
	}{
		{"full", withoutParts(full), recordS2},
		{"zero", &Record{Key: "k"}, recordPlain},
		{"synthetic flag only", &Record{Key: "k", Synthetic: true}, recordPlain},
		{"answer key", &Record{Key: "k", AnswerKey: "a1b2", Raw: "the answer"}, recordPlain},
		{"answerer", &Record{Key: "k", Answerer: &Answerer{Class: "endpoint", Identity: "https://api.openai.com/v1"}, ServedModel: "gpt-4o"}, recordPlain},
		{"synthetic answerer", &Record{Key: "k", Synthetic: true, Answerer: &Answerer{Class: "mock", Identity: "seed 7", Synthetic: true}}, recordPlain},
		{"fed", &Record{Key: "k", Synthetic: true, Fed: []Answerer{{Class: "endpoint", Identity: "http://a"}, {Class: "mock", Identity: "seed 0", Synthetic: true}}}, recordPlain},
		{"adopted", &Record{Key: "k", AnswerKey: "a", Answerer: &Answerer{Class: "endpoint", Identity: "http://gw"}, AdoptedFrom: "0ld"}, recordPlain},
		{"batch answer with cached tokens", &Record{Key: "k", Usage: Usage{InputTokens: 50, CachedTokens: 32}, Obtained: "batch batch_000003 of provider openai"}, recordPlain},
		{"cached tokens only", &Record{Key: "k", Usage: Usage{InputTokens: 50, CachedTokens: 32}}, recordPlain},
		{"obtained only", &Record{Key: "k", AdoptedFrom: "0ld", Obtained: "batch b"}, recordPlain},
		{"negative and huge numbers", &Record{
			Key:   "k",
			Usage: Usage{InputTokens: -1, OutputTokens: 1 << 62, CostUSD: -0.5, LatencyMS: -(1 << 40), Attempts: -3},
		}, recordPlain},
		{"pre-epoch time", &Record{Key: "k", CreatedAt: time.Date(1950, 1, 2, 3, 4, 5, 999999999, time.UTC)}, recordPlain},
		{"binary output", &Record{Key: "k", Output: []byte{0, 1, 2, 255, 254}}, recordPlain},
		{"model text", withoutParts(prose(5)), recordS2},
		{"incompressible", &Record{Key: "k", Output: noise(2000)}, recordPlain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := encodeRecord(tt.rec)
			if v[0] != tt.format {
				t.Fatalf("stored as format %d, want %d", v[0], tt.format)
			}
			got, err := decodeRecord(v)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.rec) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tt.rec)
			}
		})
	}
}

// Text that compresses like model prose must shrink by at least a quarter,
// or compression is not paying for its cost on every Get.
func TestRecordCodecCompressesModelText(t *testing.T) {
	rec := prose(5)
	text := len(rec.Output) + len(rec.Raw)
	if v := encodeRecord(rec); len(v) > text*3/4 {
		t.Fatalf("%d bytes of text stored in %d bytes, want at most %d", text, len(v), text*3/4)
	}
}

// prose is a record whose text compresses like model output.
func prose(i int) *Record {
	r := sampleRecord(i)
	r.Raw = benchText(uint64(i), 3000)
	r.Output = []byte(fmt.Sprintf(`{"idea":%q}`, benchText(uint64(i+1), 1500)))
	r.OutputDigest = DigestOutput(r.Output)
	return r
}

// noise is deterministic incompressible bytes.
func noise(n int) []byte {
	out := make([]byte, n)
	x := uint32(2463534242)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = byte(x)
	}
	return out
}

func TestRecordCodecNormalisesTimeToUTC(t *testing.T) {
	loc := time.FixedZone("UTC+2", 2*3600)
	at := time.Date(2025, 6, 1, 14, 0, 0, 42, loc)
	got, err := decodeRecord(encodeRecord(&Record{Key: "k", CreatedAt: at}))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2025, 6, 1, 12, 0, 0, 42, time.UTC); !got.CreatedAt.Equal(want) || got.CreatedAt.Location() != time.UTC {
		t.Fatalf("CreatedAt = %v, want %v in UTC", got.CreatedAt, want)
	}
}

func TestSummaryMatchesRecord(t *testing.T) {
	rec := sampleRecord(4)
	sum, err := readSummary(encodeRecord(rec))
	if err != nil {
		t.Fatal(err)
	}
	want := summary{
		Flags: flagSynthetic | flagRawRefs, Key: rec.Key, Stage: rec.Stage, Address: rec.Address,
		CreatedAt: rec.CreatedAt, Usage: rec.Usage, OutputDigest: rec.OutputDigest, OutputLen: len(rec.Output),
	}
	if !reflect.DeepEqual(sum, want) {
		t.Fatalf("summary:\n got %+v\nwant %+v", sum, want)
	}
}

var storedForms = []struct {
	name string
	rec  *Record
}{
	{"plain", sampleRecord(3)},
	{"compressed", prose(3)},
}

// Every single-bit flip anywhere in a stored value must be caught on decode.
func TestRecordCodecDetectsEveryBitFlip(t *testing.T) {
	for _, form := range storedForms {
		v := encodeRecord(form.rec)
		for i := range v {
			for bit := range 8 {
				bad := append([]byte(nil), v...)
				bad[i] ^= 1 << bit
				if _, err := decodeRecord(bad); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s: flip byte %d bit %d: err = %v, want ErrCorrupt", form.name, i, bit, err)
				}
			}
		}
	}
}

func TestRecordCodecRejectsTruncation(t *testing.T) {
	for _, form := range storedForms {
		v := encodeRecord(form.rec)
		for n := range len(v) {
			if _, err := decodeRecord(v[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: truncated to %d of %d bytes: err = %v, want ErrCorrupt", form.name, n, len(v), err)
			}
		}
	}
}

// A value with a valid checksum but inconsistent fields (as a bug, not bit
// rot, would produce) must still be refused rather than misread.
func TestRecordCodecRejectsMalformedBodies(t *testing.T) {
	seal := func(body ...byte) []byte {
		e := encoder{buf: body}
		return e.seal()
	}
	valid := encodeRecord(&Record{Key: "k"})
	validBody := valid[: len(valid)-crcSize : len(valid)-crcSize]
	tests := []struct {
		name string
		v    []byte
		want string
	}{
		{"no fields", seal(recordPlain), "value truncated"},
		{"length past end", seal(recordPlain, 0, 200, 1), "value truncated"},
		{"trailing bytes", seal(append(validBody, 9)...), "1 unexpected trailing bytes"},
		{"unknown format", seal(9, 0), "unknown format 9"},
		{"compressed garbage", seal(recordS2, 0xff, 0xff, 0xff), "decompress"},
		{"too short for a checksum", []byte{recordPlain, 0, 0}, "shorter than its header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeRecord(tt.v)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrCorrupt containing %q", err, tt.want)
			}
		})
	}
}

func TestPartsCodec(t *testing.T) {
	tests := []struct {
		name  string
		parts []Part
	}{
		{"none", nil},
		{"one empty", []Part{{}}},
		{"several", []Part{{Name: "prompt", Digest: "abc", Display: "prompts/x.tmpl"}, {Name: "upstream[0]", Digest: "def"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := encodeParts(tt.parts)
			got, err := decodeParts(v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.parts) {
				t.Fatalf("got %+v, want %+v", got, tt.parts)
			}
			v[len(v)/2] ^= 0x10
			if _, err := decodeParts(v); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flipped byte: err = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestRawTextStoredOnce: the accepted answer is Record.Raw and the last
// attempt's raw, and a re-ask can repeat an earlier answer; each is stored
// once.
func TestRawTextStoredOnce(t *testing.T) {
	noise := make([]byte, 5000)
	rand.New(rand.NewSource(1)).Read(noise)
	raw := hex.EncodeToString(noise) // s2 finds no matches in it, only across copies
	rec := sampleRecord(1)
	rec.Raw = raw
	rec.Attempts = []Attempt{
		{Raw: "not json", Status: 200},
		{Raw: "not json", Status: 200, Repair: true},
		{Raw: raw, Status: 200, Repair: true},
		{Error: "timeout", Status: 0},
	}
	body := encodeRecord(rec)
	if body[0] == recordS2 {
		t.Fatal("test needs an uncompressed value to count bytes")
	}
	if n := strings.Count(string(body), raw); n != 1 {
		t.Fatalf("raw text stored %d times, want 1", n)
	}
	if n := strings.Count(string(body), "not json"); n != 1 {
		t.Fatalf("repeated attempt raw stored %d times, want 1", n)
	}
	got, err := decodeRecord(body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, withoutParts(rec)) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got.Attempts, rec.Attempts)
	}
}

// TestDecodesRecordsBeforeRawRefs reads a value written before attempts
// referred to Record.Raw (testdata, produced by that encoder).
func TestDecodesRecordsBeforeRawRefs(t *testing.T) {
	h, err := os.ReadFile("testdata/record-v1-attempts.hex")
	if err != nil {
		t.Fatal(err)
	}
	v, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	want := sampleRecord(3)
	want.Attempts = []Attempt{{Raw: "first try", Status: 200, Duration: 5}, {Raw: want.Raw, Status: 200, Repair: true, Duration: 7}}
	got, err := decodeRecord(v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, withoutParts(want)) {
		t.Fatalf("old record:\n got %+v\nwant %+v", got, withoutParts(want))
	}
}

func TestRawRefOutOfRangeIsCorrupt(t *testing.T) {
	e := encoder{}
	e.attempts("final", []Attempt{{Raw: "a"}})
	// Point attempt 0 at attempt 0 (only earlier attempts may be named).
	d := decoder{s: string([]byte{1, 0, rawIsAttempt, 0, 0, 0})}
	if as := d.attempts("final", true); d.err == nil {
		t.Fatalf("self-reference decoded as %+v", as)
	}
}

// A record without an answer key encodes exactly as before the field
// existed (no flag, no trailing string), so records written earlier decode
// unchanged; one with a key carries it last.
func TestAnswerKeyEncodedOnlyWhenSet(t *testing.T) {
	plain := encodeRecord(&Record{Key: "k", Raw: "r"})
	keyed := encodeRecord(&Record{Key: "k", Raw: "r", AnswerKey: "abc"})
	if plain[1]&flagAnswerKey != 0 || keyed[1]&flagAnswerKey == 0 {
		t.Fatalf("flags %08b and %08b", plain[1], keyed[1])
	}
	if len(keyed)-len(plain) != 1+len("abc") {
		t.Errorf("the key adds %d bytes, want %d (a length and the key)", len(keyed)-len(plain), 1+len("abc"))
	}
}
