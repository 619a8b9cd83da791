package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"
)

// Every stored value is
//
//	format byte | body | CRC-32C of everything before it (4 bytes, LE)
//
// and a body is a sequence of fields, each a uvarint length + bytes or a
// (u)varint. CRC-32C is hardware-accelerated, cheap enough to check on every
// Get, and catches any flipped bit in a value.

const crcSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errShortValue = errors.New("value truncated")

// encoder appends fields to buf.
type encoder struct{ buf []byte }

func (e *encoder) byte(b byte) {
	e.buf = append(e.buf, b)
}

func (e *encoder) uvarint(v uint64) {
	e.buf = binary.AppendUvarint(e.buf, v)
}

func (e *encoder) varint(v int64) {
	e.buf = binary.AppendVarint(e.buf, v)
}

func (e *encoder) float(f float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
}

// time keeps the instant, not the zone: values decode in UTC.
func (e *encoder) time(t time.Time) {
	e.varint(t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
}

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) bytes(b []byte) {
	e.uvarint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// seal appends the CRC-32C of everything encoded so far and returns the value.
func (e *encoder) seal() []byte {
	return binary.LittleEndian.AppendUint32(e.buf, crc32.Checksum(e.buf, castagnoli))
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
