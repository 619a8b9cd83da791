package cache

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
)

// A bundle is one gzip member holding, uncompressed:
//
//	header   "ideaflow-cache-bundle" + version byte (1, or 2 with runs)
//	records  'R' + uint32 BE length + JSON Record (with Parts), in key order
//	runs     'U' + uint32 BE length + JSON RunRecord, oldest first (version 2 only)
//	trailer  'T' + uint64 BE record count + SHA-256 of every byte before the digest
//
// Runs carry the variable values each run used, so that show, export and
// report on the importing side describe the configuration that was run. A
// bundle without runs is version 1, byte for byte as before runs were added.
//
// JSON keeps bundles readable by other tools; records are checked against
// their OutputDigest on import, and the trailer catches dropped, reordered or
// altered bytes that a per-record check cannot. Gzip's own CRC adds nothing we
// rely on but makes damage to compressed bytes surface early.
//
// Trust model. The trailer digest is also the bundle's identity: Export
// returns it (`cache export` prints it) and ImportExpect refuses a bundle
// whose digest differs, before writing anything. Without an expected digest,
// the checks above only catch accidental damage: anyone can write a bundle
// whose records and trailer are self-consistent, and an imported record is
// served as a cache hit for its key, so a forged bundle can plant any output
// under any key (cache poisoning). The digest authenticates a bundle only if
// it reaches the importer by a channel the exporter controls (a signed
// message, the paper's artifact page, a chat with the colleague), separate
// from the bundle file itself. Bundles are not signed or encrypted; they hold
// model outputs and raw answers in the clear (never API keys).
const (
	bundleMagic   = "ideaflow-cache-bundle"
	bundleVersion = 1
	// bundleVersionRuns is the version of a bundle that holds run frames.
	bundleVersionRuns = 2
	frameRecord       = 'R'
	frameRun          = 'U'
	frameTrailer      = 'T'
	// maxBundleRecord refuses absurd lengths from a damaged length field
	// before allocating for them.
	maxBundleRecord = 256 << 20
)

var (
	// ErrBundleCorrupt is wrapped by Import errors for a bundle whose bytes are damaged.
	ErrBundleCorrupt = errors.New("bundle corrupt")
	// ErrBundleTruncated is wrapped by Import errors for a bundle that ends early.
	ErrBundleTruncated = errors.New("bundle truncated")
	// ErrDigestMismatch is wrapped by ImportExpect errors for a sound bundle
	// that is not the one expected.
	ErrDigestMismatch = errors.New("bundle digest does not match the expected digest")
)

type bundleWriter struct {
	gz    *gzip.Writer
	h     hash.Hash
	out   io.Writer // gz and h
	count int
}

func newBundleWriterVersion(w io.Writer, version byte) (*bundleWriter, error) {
	// The gzip header keeps its zero ModTime so equal contents give equal bundles.
	gz := gzip.NewWriter(w)
	bw := &bundleWriter{gz: gz, h: sha256.New()}
	bw.out = io.MultiWriter(gz, bw.h)
	if _, err := bw.out.Write(append([]byte(bundleMagic), version)); err != nil {
		return nil, fmt.Errorf("write bundle header: %w", err)
	}
	return bw, nil
}

func (bw *bundleWriter) write(rec *Record) error {
	payload, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	frame := make([]byte, 5, 5+len(payload))
	frame[0] = frameRecord
	binary.BigEndian.PutUint32(frame[1:], uint32(len(payload)))
	if _, err := bw.out.Write(append(frame, payload...)); err != nil {
		return fmt.Errorf("write record %s: %w", rec.Key, err)
	}
	bw.count++
	return nil
}

// writeRun writes a run frame (version 2 bundles only).
func (bw *bundleWriter) writeRun(r *RunRecord) error {
	payload, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	frame := make([]byte, 5, 5+len(payload))
	frame[0] = frameRun
	binary.BigEndian.PutUint32(frame[1:], uint32(len(payload)))
	if _, err := bw.out.Write(append(frame, payload...)); err != nil {
		return fmt.Errorf("write run %s: %w", r.ID, err)
	}
	return nil
}

// close writes the trailer and returns the bundle's digest (hex).
func (bw *bundleWriter) close() (string, error) {
	trailer := binary.BigEndian.AppendUint64([]byte{frameTrailer}, uint64(bw.count))
	if _, err := bw.out.Write(trailer); err != nil {
		return "", fmt.Errorf("write bundle trailer: %w", err)
	}
	sum := bw.h.Sum(nil)
	if _, err := bw.gz.Write(sum); err != nil {
		return "", fmt.Errorf("write bundle trailer: %w", err)
	}
	if err := bw.gz.Close(); err != nil {
		return "", fmt.Errorf("finish bundle: %w", err)
	}
	return hex.EncodeToString(sum), nil
}

// BundleDigest checks a whole bundle, as Import does before writing, and
// returns its digest (what Export returned for it) and record count.
func BundleDigest(r io.Reader) (digest string, records int, err error) {
	var n int
	digest, err = scanBundle(r, func(*Record) error { n++; return nil })
	return digest, n, err
}

// normDigest accepts a digest as printed ("sha256:" and hex) or bare hex.
func normDigest(d string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "sha256:"))
}

// readBundleRuns checks the whole bundle before calling fn for any record, so a
// damaged bundle is refused with nothing applied. It reads the input twice:
// by seeking back when r can seek, otherwise from a spooled temporary copy.
// When expect is not empty, a bundle with another digest is refused after the
// first pass, before fn sees any record. It also hands each run frame to
// runFn (when not nil), on the second pass.
func readBundleRuns(r io.Reader, expect string, fn func(*Record) error, runFn func(*RunRecord) error) error {
	replay, cleanup, err := replayable(r)
	if err != nil {
		return err
	}
	defer cleanup()
	first, err := replay()
	if err != nil {
		return err
	}
	digest, err := scanBundle(first, nil)
	if err != nil {
		return err
	}
	if expect != "" && normDigest(expect) != digest {
		return fmt.Errorf("%w: bundle has sha256:%s, expected sha256:%s", ErrDigestMismatch, digest, normDigest(expect))
	}
	second, err := replay()
	if err != nil {
		return err
	}
	again, err := scanBundleRuns(second, fn, runFn)
	if err == nil && again != digest {
		// A spooled copy cannot change, but a seekable file can between passes.
		err = fmt.Errorf("%w: bundle changed while it was read", ErrBundleCorrupt)
	}
	return err
}

// replayable returns a func that yields r from its start on each call.
func replayable(r io.Reader) (replay func() (io.Reader, error), cleanup func(), err error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		// Pipes are *os.File too; their Seek fails and they fall through to spooling.
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			calls := 0
			return func() (io.Reader, error) {
				calls++
				if calls == 1 {
					return rs, nil
				}
				if _, err := rs.Seek(start, io.SeekStart); err != nil {
					return nil, fmt.Errorf("rewind bundle: %w", err)
				}
				return rs, nil
			}, func() {}, nil
		}
	}
	spool, err := os.CreateTemp("", "ideaflow-bundle-*.tmp")
	if err != nil {
		return nil, nil, fmt.Errorf("spool bundle: %w", err)
	}
	cleanup = func() {
		spool.Close()
		os.Remove(spool.Name())
	}
	calls := 0
	return func() (io.Reader, error) {
		calls++
		if calls == 1 {
			return io.TeeReader(r, spool), nil
		}
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("rewind spooled bundle: %w", err)
		}
		return spool, nil
	}, cleanup, nil
}

// bundleReader reads frames, hashing the bytes the trailer digest covers.
type bundleReader struct {
	raw     *bufio.Reader // the compressed input
	r       *bufio.Reader // the decompressed stream
	h       hash.Hash
	records int
}

func (br *bundleReader) read(p []byte, where string) error {
	if _, err := io.ReadFull(br.r, p); err != nil {
		return classifyRead(err, where)
	}
	br.h.Write(p)
	return nil
}

// classifyRead turns a decompression or read error into one that says what is
// wrong with the bundle.
func classifyRead(err error, where string) error {
	var flateErr flate.CorruptInputError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: stream ends %s", ErrBundleTruncated, where)
	case errors.Is(err, gzip.ErrChecksum):
		return fmt.Errorf("%w: gzip checksum mismatch %s", ErrBundleCorrupt, where)
	case errors.Is(err, gzip.ErrHeader):
		return fmt.Errorf("%w: bad gzip header %s", ErrBundleCorrupt, where)
	case errors.As(err, &flateErr):
		return fmt.Errorf("%w: compressed data damaged %s (%v)", ErrBundleCorrupt, where, err)
	}
	return fmt.Errorf("read bundle %s: %w", where, err)
}

// scanBundle checks a bundle frame by frame and hands each verified record to
// fn (when fn is not nil), and returns the bundle's digest (hex). Records are
// numbered from 1 in errors.
func scanBundle(src io.Reader, fn func(*Record) error) (string, error) {
	return scanBundleRuns(src, fn, nil)
}

// scanBundleRuns is scanBundle that also hands each run frame to runFn.
func scanBundleRuns(src io.Reader, fn func(*Record) error, runFn func(*RunRecord) error) (string, error) {
	// gzip reads a bufio.Reader without buffering it again, so after the gzip
	// member ends, raw holds exactly the bytes that follow it.
	raw := bufio.NewReader(src)
	zr, err := gzip.NewReader(raw)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "", fmt.Errorf("%w: stream ends inside the gzip header", ErrBundleTruncated)
	case errors.Is(err, gzip.ErrHeader):
		return "", fmt.Errorf("%w: not gzip data (a bundle is a gzip stream)", ErrBundleCorrupt)
	case err != nil:
		return "", fmt.Errorf("read bundle: %w", err)
	}
	zr.Multistream(false)
	br := &bundleReader{raw: raw, r: bufio.NewReaderSize(zr, 64<<10), h: sha256.New()}
	header := make([]byte, len(bundleMagic)+1)
	if err := br.read(header, "inside the header"); err != nil {
		return "", err
	}
	if string(header[:len(bundleMagic)]) != bundleMagic {
		return "", fmt.Errorf("%w: not an ideaflow cache bundle (header %q)", ErrBundleCorrupt, header[:len(bundleMagic)])
	}
	if v := header[len(bundleMagic)]; v != bundleVersion && v != bundleVersionRuns {
		// Damage can garble the version byte too; only a stream that passes
		// gzip's CRC is reported as a newer format.
		if _, err := io.Copy(io.Discard, br.r); err != nil {
			return "", classifyRead(err, "after the header")
		}
		return "", fmt.Errorf("bundle format version %d is not supported (this ideaflow reads versions %d and %d)", v, bundleVersion, bundleVersionRuns)
	}
	withRuns := header[len(bundleMagic)] == bundleVersionRuns
	runs := 0
	tag := make([]byte, 1)
	for {
		next := br.records + 1
		if err := br.read(tag, fmt.Sprintf("after record %d, before the trailer", br.records)); err != nil {
			return "", err
		}
		switch tag[0] {
		case frameRecord:
			rec, err := br.record(next)
			if err != nil {
				return "", err
			}
			br.records++
			if fn != nil {
				if err := fn(rec); err != nil {
					return "", err
				}
			}
		case frameRun:
			if !withRuns {
				return "", fmt.Errorf("%w: run frame in a version %d bundle after record %d", ErrBundleCorrupt, bundleVersion, br.records)
			}
			runs++
			run, err := br.run(runs)
			if err != nil {
				return "", err
			}
			if runFn != nil {
				if err := runFn(run); err != nil {
					return "", err
				}
			}
		case frameTrailer:
			return br.trailer()
		default:
			return "", fmt.Errorf("%w: unknown frame type 0x%02x after record %d", ErrBundleCorrupt, tag[0], br.records)
		}
	}
}

func (br *bundleReader) record(n int) (*Record, error) {
	where := fmt.Sprintf("inside record %d", n)
	var size [4]byte
	if err := br.read(size[:], where); err != nil {
		return nil, err
	}
	length := binary.BigEndian.Uint32(size[:])
	if length > maxBundleRecord {
		return nil, fmt.Errorf("%w: record %d claims %d bytes (limit %d)", ErrBundleCorrupt, n, length, maxBundleRecord)
	}
	payload := make([]byte, length)
	if err := br.read(payload, where); err != nil {
		return nil, err
	}
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("%w: record %d does not decode: %v", ErrBundleCorrupt, n, err)
	}
	if err := checkID("record key", rec.Key); err != nil {
		return nil, fmt.Errorf("%w: record %d: %v", ErrBundleCorrupt, n, err)
	}
	if DigestOutput(rec.Output) != rec.OutputDigest {
		return nil, fmt.Errorf("%w: record %d (key %s) output digest mismatch", ErrBundleCorrupt, n, rec.Key)
	}
	return &rec, nil
}

func (br *bundleReader) run(n int) (*RunRecord, error) {
	where := fmt.Sprintf("inside run %d", n)
	var size [4]byte
	if err := br.read(size[:], where); err != nil {
		return nil, err
	}
	length := binary.BigEndian.Uint32(size[:])
	if length > maxBundleRecord {
		return nil, fmt.Errorf("%w: run %d claims %d bytes (limit %d)", ErrBundleCorrupt, n, length, maxBundleRecord)
	}
	payload := make([]byte, length)
	if err := br.read(payload, where); err != nil {
		return nil, err
	}
	var r RunRecord
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, fmt.Errorf("%w: run %d does not decode: %v", ErrBundleCorrupt, n, err)
	}
	if err := checkID("run id", r.ID); err != nil {
		return nil, fmt.Errorf("%w: run %d: %v", ErrBundleCorrupt, n, err)
	}
	return &r, nil
}

func (br *bundleReader) trailer() (string, error) {
	where := "inside the trailer"
	var count [8]byte
	if err := br.read(count[:], where); err != nil {
		return "", err
	}
	want := br.h.Sum(nil)
	got := make([]byte, sha256.Size)
	if _, err := io.ReadFull(br.r, got); err != nil {
		return "", classifyRead(err, where)
	}
	if !bytes.Equal(got, want) {
		return "", fmt.Errorf("%w: trailer checksum mismatch: the %d records and header do not hash to the recorded digest", ErrBundleCorrupt, br.records)
	}
	if n := binary.BigEndian.Uint64(count[:]); n != uint64(br.records) {
		return "", fmt.Errorf("%w: trailer counts %d records, bundle holds %d", ErrBundleCorrupt, n, br.records)
	}
	// Reading to the end of the gzip member makes gzip check its CRC and length.
	switch _, err := br.r.ReadByte(); {
	case err == nil:
		return "", fmt.Errorf("%w: data after the trailer", ErrBundleCorrupt)
	case !errors.Is(err, io.EOF):
		return "", classifyRead(err, "after the trailer")
	}
	switch _, err := br.raw.ReadByte(); {
	case err == nil:
		return "", fmt.Errorf("%w: data after the end of the gzip stream", ErrBundleCorrupt)
	case !errors.Is(err, io.EOF):
		return "", fmt.Errorf("read bundle: %w", err)
	}
	return hex.EncodeToString(want), nil
}
