package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"
)

// Stored records use a small binary encoding rather than JSON: a cache hit
// decodes one record, and BenchmarkCodec shows JSON (base64 output, reflection)
// costing several times more per hit. Layout of a value:
//
//	format byte | fields, each a uvarint length + bytes or a (u)varint | CRC-32C (4 bytes, LE)
//
// The CRC covers every byte before it, so a flipped bit in any field is caught
// on Get; SHA-256 of the output against OutputDigest is checked by Verify,
// Export and Import, which can afford it.
const (
	recordFormat  byte = 1
	partsFormat   byte = 1
	crcSize            = 4
	flagSynthetic      = 1 << 0
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

// decoder reads fields in order; the first error sticks so callers check once.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail(errShortValue)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShortValue)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShortValue)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) float() float64 {
	if len(d.b) < 8 {
		d.fail(errShortValue)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
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

// raw returns the next length-prefixed field aliasing the input.
func (d *decoder) raw() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShortValue)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.raw()) }

// bytes copies the next field; empty decodes as nil.
func (d *decoder) bytes() []byte {
	v := d.raw()
	if len(v) == 0 {
		return nil
	}
	return append(make([]byte, 0, len(v)), v...)
}

func (d *decoder) attempts() []Attempt {
	n := d.uvarint()
	// Each attempt takes at least 5 bytes, which bounds n before allocating.
	if n == 0 || n > uint64(len(d.b))/5 {
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

// unseal checks the trailing CRC and format byte and returns the fields.
func unseal(v []byte, format byte) ([]byte, error) {
	if len(v) < 1+crcSize {
		return nil, fmt.Errorf("%w: %d-byte value is shorter than its header", ErrCorrupt, len(v))
	}
	body, sum := v[:len(v)-crcSize], binary.LittleEndian.Uint32(v[len(v)-crcSize:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w: checksum %08x, stored %08x", ErrCorrupt, got, sum)
	}
	if body[0] != format {
		return nil, fmt.Errorf("%w: unknown format %d", ErrCorrupt, body[0])
	}
	return body[1:], nil
}

// encodeRecord encodes rec without its Parts (see encodeParts).
func encodeRecord(rec *Record) []byte {
	e := encoder{buf: make([]byte, 0, 96+len(rec.Key)+len(rec.Output)+len(rec.Raw)+len(rec.Reasoning))}
	e.byte(recordFormat)
	var flags byte
	if rec.Synthetic {
		flags |= flagSynthetic
	}
	e.byte(flags)
	// Summary fields first: Stats and List stop decoding after the output length.
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
	e.bytes(rec.Output)
	e.str(rec.Model)
	e.str(rec.ServedModel)
	e.str(rec.Fingerprint)
	e.str(rec.Raw)
	e.str(rec.Reasoning)
	e.attempts(rec.Attempts)
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

func decodeSummary(d *decoder) summary {
	var s summary
	s.Flags = d.byte()
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
	return s
}

// readSummary decodes the summary of a stored record value.
func readSummary(v []byte) (summary, error) {
	body, err := unseal(v, recordFormat)
	if err != nil {
		return summary{}, err
	}
	d := decoder{b: body}
	s := decodeSummary(&d)
	s.OutputLen = len(d.raw())
	if d.err != nil {
		return summary{}, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return s, nil
}

// decodeRecord decodes a stored record value; the result does not alias v.
func decodeRecord(v []byte) (*Record, error) {
	body, err := unseal(v, recordFormat)
	if err != nil {
		return nil, err
	}
	d := decoder{b: body}
	s := decodeSummary(&d)
	rec := &Record{
		Key:          s.Key,
		Stage:        s.Stage,
		Address:      s.Address,
		CreatedAt:    s.CreatedAt,
		Usage:        s.Usage,
		OutputDigest: s.OutputDigest,
		Synthetic:    s.Flags&flagSynthetic != 0,
	}
	rec.Output = d.bytes()
	rec.Model = d.str()
	rec.ServedModel = d.str()
	rec.Fingerprint = d.str()
	rec.Raw = d.str()
	rec.Reasoning = d.str()
	rec.Attempts = d.attempts()
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d unexpected trailing bytes", len(d.b))
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
	body, err := unseal(v, partsFormat)
	if err != nil {
		return nil, err
	}
	d := decoder{b: body}
	n := d.uvarint()
	// Each part takes at least 3 bytes (three empty strings).
	if n > uint64(len(d.b))/3 {
		return nil, fmt.Errorf("%w: part count %d exceeds value size", ErrCorrupt, n)
	}
	var parts []Part
	if n > 0 {
		parts = make([]Part, n)
	}
	for i := range parts {
		parts[i] = Part{Name: d.str(), Digest: d.str(), Display: d.str()}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d unexpected trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return parts, nil
}
