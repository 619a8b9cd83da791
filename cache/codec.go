package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"github.com/klauspost/compress/s2"
)

// Stored records use a small binary encoding rather than JSON: a cache hit
// decodes one record, and BenchmarkCodec shows JSON (base64 output, reflection)
// costing several times more per hit. Layout of a value:
//
//	format byte | body | CRC-32C of everything before it (4 bytes, LE)
//
// The body is a sequence of fields, each a uvarint length + bytes or a
// (u)varint. Record bodies of model text are stored s2-compressed (format
// recordS2) when that saves at least an eighth: values are read through
// Badger's memory-mapped value log, so their size is what a re-run of a large
// cache keeps resident. The CRC covers the stored bytes, so a flipped bit in
// any field is caught on Get, before decompression; SHA-256 of the output
// against OutputDigest is checked by Verify, Export and Import, which can
// afford it.
const (
	recordPlain byte = 1
	recordS2    byte = 2
	partsFormat byte = 1
	crcSize          = 4
	// compressMin is the body size below which compression is not tried.
	compressMin   = 256
	flagSynthetic = 1 << 0
	// maxRecordBody refuses to inflate a damaged length prefix into a huge allocation.
	maxRecordBody = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errShortValue = errors.New("value truncated")

type encoder struct{ buf []byte }

func (e *encoder) byte(b byte)      { e.buf = append(e.buf, b) }
func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) float(f float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
}
func (e *encoder) time(t time.Time) { e.varint(t.Unix()); e.uvarint(uint64(t.Nanosecond())) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bytes(b []byte)   { e.uvarint(uint64(len(b))); e.buf = append(e.buf, b...) }
func (e *encoder) seal() []byte {
	return binary.LittleEndian.AppendUint32(e.buf, crc32.Checksum(e.buf, castagnoli))
}
func (e *encoder) attempts(as []Attempt) {
	e.uvarint(uint64(len(as)))
	for _, a := range as {
		e.str(a.Error)
		e.str(a.Raw)
		e.varint(int64(a.Status))
		if a.Repair {
			e.byte(1)
		} else {
			e.byte(0)
		}
		e.varint(a.Duration)
	}
}

// decoder reads fields in order from a string, so that every string field
// of a record is a substring of one allocation instead of one allocation per
// field (allocation dominates decoding on the Get path). The first error
// sticks so callers check once.
type decoder struct {
	s   string
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.s = ""
}

func (d *decoder) byte() byte {
	if len(d.s) < 1 {
		d.fail(errShortValue)
		return 0
	}
	v := d.s[0]
	d.s = d.s[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	var v uint64
	for i := 0; i < binary.MaxVarintLen64 && i < len(d.s); i++ {
		b := d.s[i]
		if i == binary.MaxVarintLen64-1 && b > 1 {
			break // overflows 64 bits
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			d.s = d.s[i+1:]
			return v
		}
	}
	d.fail(errShortValue)
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	// Zig-zag, as binary.AppendVarint writes it.
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) float() float64 {
	if len(d.s) < 8 {
		d.fail(errShortValue)
		return 0
	}
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(d.s[i])
	}
	d.s = d.s[8:]
	return math.Float64frombits(v)
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail(fmt.Errorf("nanoseconds %d out of range", nsec))
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// str returns the next length-prefixed field as a substring of the input.
func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.s)) {
		d.fail(errShortValue)
		return ""
	}
	v := d.s[:n]
	d.s = d.s[n:]
	return v
}

func (d *decoder) attempts() []Attempt {
	n := d.uvarint()
	// Each attempt takes at least 5 bytes, which bounds n before allocating.
	if n == 0 || n > uint64(len(d.s))/5 {
		if n != 0 {
			d.fail(errShortValue)
		}
		return nil
	}
	as := make([]Attempt, n)
	for i := range as {
		as[i].Error = d.str()
		as[i].Raw = d.str()
		as[i].Status = int(d.varint())
		as[i].Repair = d.byte() == 1
		as[i].Duration = d.varint()
	}
	return as
}

// splitOutput takes the flags byte and the output field off the front of a
// record body; the output aliases body.
func splitOutput(body []byte) (flags byte, output, rest []byte, err error) {
	if len(body) < 1 {
		return 0, nil, nil, errShortValue
	}
	n, w := binary.Uvarint(body[1:])
	if w <= 0 || n > uint64(len(body)-1-w) {
		return 0, nil, nil, errShortValue
	}
	start := 1 + w
	return body[0], body[start : start+int(n)], body[start+int(n):], nil
}

// unseal checks the trailing CRC and returns the format byte and what follows it.
func unseal(v []byte) (byte, []byte, error) {
	if len(v) < 1+crcSize {
		return 0, nil, fmt.Errorf("%w: %d-byte value is shorter than its header", ErrCorrupt, len(v))
	}
	body, sum := v[:len(v)-crcSize], binary.LittleEndian.Uint32(v[len(v)-crcSize:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return 0, nil, fmt.Errorf("%w: checksum %08x, stored %08x", ErrCorrupt, got, sum)
	}
	return body[0], body[1:], nil
}

// openRecord returns the body of a stored record value; owned reports whether
// the body was freshly allocated (decompressed) rather than aliasing v.
func openRecord(v []byte) (body []byte, owned bool, err error) {
	format, payload, err := unseal(v)
	if err != nil {
		return nil, false, err
	}
	switch format {
	case recordPlain:
		return payload, false, nil
	case recordS2:
		n, err := s2.DecodedLen(payload)
		if err == nil && n > maxRecordBody {
			err = fmt.Errorf("decoded length %d exceeds %d", n, maxRecordBody)
		}
		if err == nil {
			body, err = s2.Decode(make([]byte, n), payload)
		}
		if err != nil {
			return nil, false, fmt.Errorf("%w: decompress: %v", ErrCorrupt, err)
		}
		return body, true, nil
	}
	return nil, false, fmt.Errorf("%w: unknown format %d", ErrCorrupt, format)
}

// encodeRecord encodes rec without its Parts (see encodeParts). The output
// comes first so that decoding can copy it out as bytes and turn everything
// after it into a single string.
func encodeRecord(rec *Record) []byte {
	e := encoder{buf: make([]byte, 0, 96+len(rec.Key)+len(rec.Output)+len(rec.Raw)+len(rec.Reasoning))}
	e.byte(recordPlain)
	var flags byte
	if rec.Synthetic {
		flags |= flagSynthetic
	}
	e.byte(flags)
	e.bytes(rec.Output)
	// Summary fields next: Stats and List stop decoding after them.
	e.str(rec.Key)
	e.str(rec.Stage)
	e.str(rec.Address)
	e.time(rec.CreatedAt)
	e.varint(rec.Usage.InputTokens)
	e.varint(rec.Usage.OutputTokens)
	e.float(rec.Usage.CostUSD)
	e.varint(rec.Usage.LatencyMS)
	e.varint(int64(rec.Usage.Attempts))
	e.str(rec.OutputDigest)
	e.str(rec.Model)
	e.str(rec.ServedModel)
	e.str(rec.Fingerprint)
	e.str(rec.Raw)
	e.str(rec.Reasoning)
	e.attempts(rec.Attempts)
	if body := e.buf[1:]; len(body) >= compressMin {
		limit := s2.MaxEncodedLen(len(body))
		packed := make([]byte, 1+limit, 1+limit+crcSize)
		// s2.Encode writes at the start of dst and returns the used prefix.
		if n := len(s2.Encode(packed[1:], body)); n <= len(body)-len(body)/8 {
			packed[0] = recordS2
			e.buf = packed[:1+n]
		}
	}
	return e.seal()
}

// summary is the part of a record that Stats and List need.
type summary struct {
	Flags               byte
	Key, Stage, Address string
	CreatedAt           time.Time
	Usage               Usage
	OutputDigest        string
	OutputLen           int
}

// decodeSummary reads the summary fields that follow the output.
func decodeSummary(d *decoder, s *summary) {
	s.Key = d.str()
	s.Stage = d.str()
	s.Address = d.str()
	s.CreatedAt = d.time()
	s.Usage.InputTokens = d.varint()
	s.Usage.OutputTokens = d.varint()
	s.Usage.CostUSD = d.float()
	s.Usage.LatencyMS = d.varint()
	s.Usage.Attempts = int(d.varint())
	s.OutputDigest = d.str()
}

// readSummary decodes the summary of a stored record value.
func readSummary(v []byte) (summary, error) {
	body, _, err := openRecord(v)
	if err != nil {
		return summary{}, err
	}
	flags, output, rest, err := splitOutput(body)
	if err != nil {
		return summary{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	s := summary{Flags: flags, OutputLen: len(output)}
	d := decoder{s: string(rest)}
	decodeSummary(&d, &s)
	if d.err != nil {
		return summary{}, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return s, nil
}

// decodeRecord decodes a stored record value; the result does not alias v.
func decodeRecord(v []byte) (*Record, error) {
	body, owned, err := openRecord(v)
	if err != nil {
		return nil, err
	}
	flags, output, rest, err := splitOutput(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	var s summary
	d := decoder{s: string(rest)}
	decodeSummary(&d, &s)
	rec := &Record{
		Key:          s.Key,
		Stage:        s.Stage,
		Address:      s.Address,
		CreatedAt:    s.CreatedAt,
		Usage:        s.Usage,
		OutputDigest: s.OutputDigest,
		Synthetic:    flags&flagSynthetic != 0,
		Model:        d.str(),
		ServedModel:  d.str(),
		Fingerprint:  d.str(),
		Raw:          d.str(),
		Reasoning:    d.str(),
		Attempts:     d.attempts(),
	}
	switch {
	case len(output) == 0:
	case owned:
		// The decompressed body is ours; capping capacity keeps an append
		// to Output from writing over the rest of it.
		rec.Output = output[:len(output):len(output)]
	default:
		rec.Output = append(make([]byte, 0, len(output)), output...)
	}
	if d.err == nil && len(d.s) != 0 {
		d.err = fmt.Errorf("%d unexpected trailing bytes", len(d.s))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return rec, nil
}

func encodeParts(parts []Part) []byte {
	e := encoder{buf: make([]byte, 0, 8+len(parts)*96)}
	e.byte(partsFormat)
	e.uvarint(uint64(len(parts)))
	for _, p := range parts {
		e.str(p.Name)
		e.str(p.Digest)
		e.str(p.Display)
	}
	return e.seal()
}

func decodeParts(v []byte) ([]Part, error) {
	format, body, err := unseal(v)
	if err != nil {
		return nil, err
	}
	if format != partsFormat {
		return nil, fmt.Errorf("%w: unknown format %d", ErrCorrupt, format)
	}
	d := decoder{s: string(body)}
	n := d.uvarint()
	// Each part takes at least 3 bytes (three empty strings).
	if n > uint64(len(d.s))/3 {
		return nil, fmt.Errorf("%w: part count %d exceeds value size", ErrCorrupt, n)
	}
	var parts []Part
	if n > 0 {
		parts = make([]Part, n)
	}
	for i := range parts {
		parts[i] = Part{Name: d.str(), Digest: d.str(), Display: d.str()}
	}
	if d.err == nil && len(d.s) != 0 {
		d.err = fmt.Errorf("%d unexpected trailing bytes", len(d.s))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return parts, nil
}
