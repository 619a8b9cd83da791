package cache

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func exportAll(t *testing.T, s Store, keys map[string]bool) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	res, err := s.Export(&buf, keys)
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	return buf.Bytes(), res.Written
}

func TestExportImportRoundTrip(t *testing.T) {
	var recs []*Record
	for i := range 5 {
		recs = append(recs, sampleRecord(i))
	}
	recs[3].Parts = nil
	recs[4].Reasoning = "long chain of thought"
	// Who answered travels with the record: a bundle's labels are its records'.
	recs[1].Answerer, recs[1].Synthetic = &Answerer{Class: "mock", Identity: "seed 7", Synthetic: true}, true
	recs[2].Answerer, recs[2].AdoptedFrom = &Answerer{Class: "endpoint", Identity: "https://api.openai.com/v1"}, "0ld"
	recs[3].Fed, recs[3].Synthetic = []Answerer{{Class: "endpoint", Identity: "http://gw"}, {Class: "mock", Identity: "seed 7", Synthetic: true}}, true
	stores := map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemory() },
		"badger": func(t *testing.T) Store { return openTemp(t) },
	}
	for _, pair := range [][2]string{{"badger", "badger"}, {"badger", "memory"}, {"memory", "badger"}} {
		t.Run(pair[0]+"-to-"+pair[1], func(t *testing.T) {
			src, dst := stores[pair[0]](t), stores[pair[1]](t)
			defer src.Close()
			defer dst.Close()
			mustPut(t, src, recs...)
			if err := src.SetLatest("a", recs[0].Key); err != nil {
				t.Fatal(err)
			}
			if err := src.PutFailure(&Failure{Key: "f", Error: "x"}); err != nil {
				t.Fatal(err)
			}
			bundle, n := exportAll(t, src, nil)
			if n != 5 {
				t.Fatalf("Export wrote %d records, want 5", n)
			}
			imported, err := dst.Import(bytes.NewReader(bundle))
			if err != nil || imported != 5 {
				t.Fatalf("Import = %d, %v; want 5, nil", imported, err)
			}
			for _, r := range recs {
				assertRecord(t, dst, r)
			}
			// Bundles carry records only.
			if _, ok, _ := dst.Latest("a"); ok {
				t.Fatal("Import brought a latest-index entry")
			}
			if _, err := dst.Failure("f"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Import brought a failure: %v", err)
			}
		})
	}
}

func TestExportSubsetInKeyOrder(t *testing.T) {
	src := NewMemory()
	for _, i := range []int{5, 1, 3, 0} {
		mustPut(t, src, sampleRecord(i))
	}
	keys := map[string]bool{sampleRecord(5).Key: true, sampleRecord(1).Key: true, sampleRecord(0).Key: false, "never-computed": true}
	bundle, n := exportAll(t, src, keys)
	if n != 2 {
		t.Fatalf("Export wrote %d, want 2", n)
	}
	var order []string
	if _, err := scanBundle(bytes.NewReader(bundle), func(r *Record) error { order = append(order, r.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{sampleRecord(1).Key, sampleRecord(5).Key}; !slices.Equal(order, want) {
		t.Fatalf("bundle order = %v, want %v", order, want)
	}
}

func TestExportIsDeterministic(t *testing.T) {
	a, b := NewMemory(), openTemp(t)
	defer b.Close()
	for _, i := range []int{2, 0, 1} {
		mustPut(t, a, sampleRecord(i))
	}
	for _, i := range []int{1, 2, 0} {
		mustPut(t, b, sampleRecord(i))
	}
	x, _ := exportAll(t, a, nil)
	y, _ := exportAll(t, b, nil)
	if !bytes.Equal(x, y) {
		t.Fatal("equal stores exported different bundles")
	}
}

// TestExportSkipsCorruptRecords: one damaged record used to refuse the
// whole export; now it is left out and named, and the rest moves. A sound
// record whose key parts are damaged moves without them.
func TestExportSkipsCorruptRecords(t *testing.T) {
	s := NewMemory()
	mustPut(t, s, sampleRecord(0), sampleRecord(1), sampleRecord(2))
	corruptMemory(s, prefixRecord+sampleRecord(0).Key)
	corruptMemory(s, prefixParts+sampleRecord(2).Key)
	var buf bytes.Buffer
	res, err := s.Export(&buf, nil)
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	if res.Written != 2 || !slices.Equal(res.Skipped, []string{sampleRecord(0).Key}) || !slices.Equal(res.WithoutParts, []string{sampleRecord(2).Key}) {
		t.Fatalf("Export = %+v; want 2 written, record 0 skipped, record 2 without parts", res)
	}
	digest, n, err := BundleDigest(bytes.NewReader(buf.Bytes()))
	if err != nil || n != 2 || digest != res.Digest {
		t.Fatalf("BundleDigest = %s %d %v; want %s, 2 records", digest, n, err, res.Digest)
	}
	into := NewMemory()
	if _, err := into.Import(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if parts, err := into.Parts(sampleRecord(2).Key); err != nil || parts != nil {
		t.Fatalf("imported record without parts: Parts = %v, %v", parts, err)
	}
	assertRecord(t, into, sampleRecord(1))
	// The subset path skips the same way.
	res, err = s.Export(io.Discard, map[string]bool{sampleRecord(0).Key: true, sampleRecord(1).Key: true})
	if err != nil || res.Written != 1 || !slices.Equal(res.Skipped, []string{sampleRecord(0).Key}) {
		t.Fatalf("Export subset = %+v, %v", res, err)
	}
}

// TestImportExpectDigest: a bundle is imported only if it is the one the
// exporter announced; a mismatch writes nothing.
func TestImportExpectDigest(t *testing.T) {
	src := NewMemory()
	mustPut(t, src, sampleRecord(0), sampleRecord(1))
	var buf bytes.Buffer
	res, err := src.Export(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Digest) != 64 {
		t.Fatalf("digest %q is not hex SHA-256", res.Digest)
	}
	other := NewMemory()
	mustPut(t, other, sampleRecord(2))
	var forged bytes.Buffer
	if _, err := other.Export(&forged, nil); err != nil {
		t.Fatal(err)
	}
	dst := NewMemory()
	n, err := dst.ImportExpect(bytes.NewReader(forged.Bytes()), res.Digest)
	if !errors.Is(err, ErrDigestMismatch) || n != 0 || !strings.Contains(err.Error(), res.Digest) {
		t.Fatalf("ImportExpect of another bundle = %d, %v; want ErrDigestMismatch", n, err)
	}
	if keys := recordKeys(t, dst); len(keys) != 0 {
		t.Fatalf("a refused bundle wrote %v", keys)
	}
	for _, expect := range []string{res.Digest, "sha256:" + res.Digest, strings.ToUpper(res.Digest)} {
		n, err := NewMemory().ImportExpect(bytes.NewReader(buf.Bytes()), expect)
		if err != nil || n != 2 {
			t.Fatalf("ImportExpect(%q) = %d, %v", expect, n, err)
		}
	}
}

// corruptMemory flips one byte in the middle of a stored value.
func corruptMemory(m *Memory, key string) {
	m.mem.mu.Lock()
	defer m.mem.mu.Unlock()
	v := append([]byte(nil), m.mem.kv[key]...)
	v[len(v)/2] ^= 0x01
	m.mem.kv[key] = v
}

func TestImportKeepsValidLocalRecords(t *testing.T) {
	src := NewMemory()
	mustPut(t, src, sampleRecord(0), sampleRecord(1), sampleRecord(2))
	bundle, _ := exportAll(t, src, nil)

	dst := NewMemory()
	local := sampleRecord(0)
	local.Raw = "computed locally"
	mustPut(t, dst, local, sampleRecord(1))
	corruptMemory(dst, prefixRecord+sampleRecord(1).Key)

	imported, err := dst.Import(bytes.NewReader(bundle))
	if err != nil {
		t.Fatal(err)
	}
	// Record 0 is valid locally and kept; 1 is damaged and replaced; 2 is new.
	if imported != 2 {
		t.Fatalf("imported %d, want 2", imported)
	}
	assertRecord(t, dst, local)
	assertRecord(t, dst, sampleRecord(1))
	assertRecord(t, dst, sampleRecord(2))
}

// nonSeeker hides Seek so Import must spool its input.
type nonSeeker struct{ io.Reader }

func TestImportReaderKinds(t *testing.T) {
	src := NewMemory()
	mustPut(t, src, sampleRecord(0), sampleRecord(1))
	bundle, _ := exportAll(t, src, nil)
	offset := append([]byte("prefix"), bundle...)
	tests := []struct {
		name string
		r    func() io.Reader
	}{
		{"seeker", func() io.Reader { return bytes.NewReader(bundle) }},
		{"seeker not at start", func() io.Reader {
			r := bytes.NewReader(offset)
			r.Seek(int64(len("prefix")), io.SeekStart)
			return r
		}},
		{"stream", func() io.Reader { return nonSeeker{bytes.NewReader(bundle)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := NewMemory()
			n, err := dst.Import(tt.r())
			if err != nil || n != 2 {
				t.Fatalf("Import = %d, %v; want 2, nil", n, err)
			}
			assertRecord(t, dst, sampleRecord(1))
		})
	}
}

func TestImportRefusesTruncatedBundleWhole(t *testing.T) {
	src := NewMemory()
	for i := range 4 {
		mustPut(t, src, sampleRecord(i))
	}
	bundle, _ := exportAll(t, src, nil)
	for cut := range len(bundle) {
		dst := NewMemory()
		n, err := dst.Import(bytes.NewReader(bundle[:cut]))
		if !errors.Is(err, ErrBundleTruncated) {
			t.Fatalf("cut at %d of %d: err = %v, want ErrBundleTruncated", cut, len(bundle), err)
		}
		if keys := recordKeys(t, dst); n != 0 || len(keys) != 0 {
			t.Fatalf("cut at %d: imported %d, store holds %v; want nothing", cut, n, keys)
		}
	}
	// Through a non-seekable reader and into Badger too.
	dst := openTemp(t)
	defer dst.Close()
	_, err := dst.Import(nonSeeker{bytes.NewReader(bundle[:len(bundle)-20])})
	if !errors.Is(err, ErrBundleTruncated) {
		t.Fatalf("badger: err = %v, want ErrBundleTruncated", err)
	}
	if keys := recordKeys(t, dst); len(keys) != 0 {
		t.Fatalf("badger: store holds %v after a refused import", keys)
	}
}

// A flipped bit must either be refused with nothing imported or be provably
// harmless: a few bits of a gzip stream are covered by no checksum because
// readers ignore them (header mtime/OS/FTEXT, deflate padding bits), and a
// flip there leaves the decompressed bundle byte-identical.
func TestImportRefusesFlippedByteWhole(t *testing.T) {
	src := NewMemory()
	for i := range 4 {
		mustPut(t, src, sampleRecord(i))
	}
	bundle, _ := exportAll(t, src, nil)
	content := gunzip(t, bundle)
	refused, harmless := 0, 0
	for pos := range len(bundle) {
		for _, mask := range []byte{0x01, 0x80} {
			bad := append([]byte(nil), bundle...)
			bad[pos] ^= mask
			dst := NewMemory()
			n, err := dst.Import(bytes.NewReader(bad))
			if err == nil {
				if got, ok := tryGunzip(bad); !ok || !bytes.Equal(got, content) {
					t.Fatalf("flip %#x at %d of %d changed the content but was imported", mask, pos, len(bundle))
				}
				harmless++
				continue
			}
			if !errors.Is(err, ErrBundleCorrupt) && !errors.Is(err, ErrBundleTruncated) {
				t.Fatalf("flip %#x at %d of %d: err = %v, want corrupt or truncated", mask, pos, len(bundle), err)
			}
			if keys := recordKeys(t, dst); n != 0 || len(keys) != 0 {
				t.Fatalf("flip at %d: imported %d, store holds %v; want nothing", pos, n, keys)
			}
			refused++
		}
	}
	t.Logf("%d flips refused, %d harmless", refused, harmless)
}

func tryGunzip(p []byte) ([]byte, bool) {
	zr, err := gzip.NewReader(bytes.NewReader(p))
	if err != nil {
		return nil, false
	}
	out, err := io.ReadAll(zr)
	return out, err == nil
}

// rawBundle builds uncompressed bundle content frame by frame so tests can
// produce well-compressed bundles that are wrong inside.
type rawBundle struct{ buf bytes.Buffer }

func newRawBundle(version byte) *rawBundle {
	b := &rawBundle{}
	b.buf.WriteString(bundleMagic)
	b.buf.WriteByte(version)
	return b
}

func (b *rawBundle) record(rec *Record) *rawBundle {
	payload, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return b.frame(frameRecord, uint32(len(payload)), payload)
}

func (b *rawBundle) frame(tag byte, length uint32, payload []byte) *rawBundle {
	b.buf.WriteByte(tag)
	b.buf.Write(binary.BigEndian.AppendUint32(nil, length))
	b.buf.Write(payload)
	return b
}

func (b *rawBundle) trailer(count uint64) *rawBundle {
	b.buf.WriteByte(frameTrailer)
	b.buf.Write(binary.BigEndian.AppendUint64(nil, count))
	sum := sha256.Sum256(b.buf.Bytes())
	b.buf.Write(sum[:])
	return b
}

func (b *rawBundle) raw(p []byte) *rawBundle { b.buf.Write(p); return b }

func (b *rawBundle) gzip() []byte { return gzipBytes(b.buf.Bytes()) }

func gzipBytes(p []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(p)
	zw.Close()
	return out.Bytes()
}

func TestImportErrorsSayWhatIsWrong(t *testing.T) {
	r1, r2, r3 := sampleRecord(0), sampleRecord(1), sampleRecord(2)
	tampered := sampleRecord(1)
	tampered.Output = []byte(`{"idea":"swapped"}`)
	valid := newRawBundle(bundleVersion).record(r1).record(r2).record(r3).trailer(3).gzip()
	tests := []struct {
		name   string
		bundle []byte
		want   string
	}{
		{"empty input", nil, "import: bundle truncated: stream ends inside the gzip header"},
		{"not gzip", []byte("plain text, not a bundle at all"), "import: bundle corrupt: not gzip data (a bundle is a gzip stream)"},
		{"not a bundle", gzipBytes([]byte("some other gzip file with text")), `import: bundle corrupt: not an ideaflow cache bundle (header "some other gzip file ")`},
		{"future version", newRawBundle(3).trailer(0).gzip(), "import: bundle format version 3 is not supported (this ideaflow reads versions 1 and 2)"},
		{"run frame in a version 1 bundle", newRawBundle(1).record(r1).frame(frameRun, 2, []byte("{}")).trailer(1).gzip(),
			"import: bundle corrupt: run frame in a version 1 bundle after record 1"},
		{"record output digest mismatch", newRawBundle(1).record(r1).record(tampered).record(r3).trailer(3).gzip(),
			"import: bundle corrupt: record 2 (key " + r2.Key + ") output digest mismatch"},
		{"record not json", newRawBundle(1).record(r1).frame(frameRecord, 3, []byte("{x}")).trailer(2).gzip(),
			"import: bundle corrupt: record 2 does not decode: invalid character 'x' looking for beginning of object key string"},
		{"record without key", newRawBundle(1).record(&Record{Output: []byte("o"), OutputDigest: DigestOutput([]byte("o"))}).trailer(1).gzip(),
			"import: bundle corrupt: record 1: empty record key"},
		{"absurd record length", newRawBundle(1).frame(frameRecord, 1<<31, nil).gzip(),
			"import: bundle corrupt: record 1 claims 2147483648 bytes (limit 268435456)"},
		{"stream ends inside a record", newRawBundle(1).record(r1).frame(frameRecord, 100, []byte("{")).gzip(),
			"import: bundle truncated: stream ends inside record 2"},
		{"no trailer", newRawBundle(1).record(r1).record(r2).gzip(),
			"import: bundle truncated: stream ends after record 2, before the trailer"},
		{"unknown frame", newRawBundle(1).record(r1).frame('X', 0, nil).gzip(),
			"import: bundle corrupt: unknown frame type 0x58 after record 1"},
		{"trailer count", newRawBundle(1).record(r1).record(r2).trailer(3).gzip(),
			"import: bundle corrupt: trailer counts 3 records, bundle holds 2"},
		{"trailer digest", newRawBundle(1).record(r1).raw([]byte{frameTrailer, 0, 0, 0, 0, 0, 0, 0, 1}).raw(make([]byte, 32)).gzip(),
			"import: bundle corrupt: trailer checksum mismatch: the 1 records and header do not hash to the recorded digest"},
		{"cut inside trailer", newRawBundle(1).record(r1).raw([]byte{frameTrailer, 0, 0}).gzip(),
			"import: bundle truncated: stream ends inside the trailer"},
		{"data after trailer", newRawBundle(1).record(r1).trailer(1).raw([]byte("extra")).gzip(),
			"import: bundle corrupt: data after the trailer"},
		{"data after gzip stream", append(slices.Clone(valid), "junk"...),
			"import: bundle corrupt: data after the end of the gzip stream"},
		{"two bundles concatenated", append(slices.Clone(valid), valid...),
			"import: bundle corrupt: data after the end of the gzip stream"},
		{"gzip checksum", func() []byte {
			b := slices.Clone(valid)
			b[len(b)-8] ^= 0xff // first byte of the gzip CRC-32
			return b
		}(), "import: bundle corrupt: gzip checksum mismatch after the trailer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := NewMemory()
			n, err := dst.Import(bytes.NewReader(tt.bundle))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
			if keys := recordKeys(t, dst); n != 0 || len(keys) != 0 {
				t.Fatalf("imported %d, store holds %v; want nothing", n, keys)
			}
		})
	}
	if n, err := NewMemory().Import(bytes.NewReader(valid)); err != nil || n != 3 {
		t.Fatalf("the valid hand-built bundle: Import = %d, %v; want 3, nil", n, err)
	}
}

// The golden bundle pins format version 1: a later change that cannot read
// it breaks every bundle users have shared.
func TestGoldenBundleV1(t *testing.T) {
	golden := filepath.Join("testdata", "bundle-v1.gz")
	recs := []*Record{sampleRecord(0), sampleRecord(1), sampleRecord(2)}
	recs[1].Parts = nil
	if *update {
		src := NewMemory()
		mustPut(t, src, recs...)
		bundle, _ := exportAll(t, src, nil)
		if err := os.WriteFile(golden, bundle, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bundle, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	dst := NewMemory()
	n, err := dst.Import(bytes.NewReader(bundle))
	if err != nil || n != 3 {
		t.Fatalf("Import golden = %d, %v; want 3, nil", n, err)
	}
	for _, r := range recs {
		assertRecord(t, dst, r)
	}
	// Re-exporting yields the same uncompressed content (compressed bytes may
	// differ between Go releases, so those are not compared).
	again, _ := exportAll(t, dst, nil)
	if a, b := gunzip(t, bundle), gunzip(t, again); !reflect.DeepEqual(a, b) {
		t.Fatalf("re-export differs from golden content:\n%q\n%q", a, b)
	}
}

func gunzip(t *testing.T, p []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(p))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
