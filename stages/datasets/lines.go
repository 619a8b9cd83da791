package datasets

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxLineBytes caps one line of a dataset file. Decoding a record costs many
// times its size (a 50 MB line took 4.8 GB), so an oversized line is refused
// before it is decoded. No real record comes near it: an IdeaBench target
// with all its references' abstracts is a few hundred kB.
const MaxLineBytes = 8 << 20

// checkedReader passes a dataset file through, refusing a line longer than
// MaxLineBytes and bytes that are not UTF-8 (encoding/json and encoding/csv
// would otherwise turn them into U+FFFD or keep them, so the cache key would
// depend on how the file was saved). Every format reads through it, so the
// rules hold alike for JSONL and CSV and are declared once.
//
// It hands on only whole lines before the offending one, so a reader never
// sees a broken line before the error, except for the too-long line itself
// (already passed on in part): Read lets err win over the reader's own
// complaint about that partial line.
type checkedReader struct {
	name    string
	r       io.Reader
	buf     []byte
	line    int    // 1-based number of the line being read
	lineLen int    // bytes of that line read so far
	carry   []byte // an incomplete UTF-8 sequence at the end of the last chunk
	pending []byte // checked bytes not yet handed on
	readErr error  // the underlying reader's error (io.EOF at the end), after pending
	failed  error  // the problem found, to report after pending
	err     error  // failed, once reported: every byte before it was handed on
}

func newCheckedReader(name string, r io.Reader) *checkedReader {
	return &checkedReader{name: name, r: r, line: 1, buf: make([]byte, 64<<10)}
}

func (c *checkedReader) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.failed != nil {
			c.err = c.failed
			return 0, c.err
		}
		if c.readErr != nil {
			return 0, c.readErr
		}
		nc := copy(c.buf, c.carry)
		n, err := c.r.Read(c.buf[nc:])
		chunk := c.buf[:nc+n]
		good := c.check(chunk, err != nil)
		c.pending, c.carry, c.readErr = chunk[:good], chunk[good:], err
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// check scans buf and returns how many of its bytes may be handed on: all of
// them but an incomplete trailing UTF-8 sequence (unless at EOF), or, on a
// problem, the bytes up to the start of the offending line.
func (c *checkedReader) check(buf []byte, atEOF bool) int {
	lineStart := 0
	for i := 0; i < len(buf); {
		b := buf[i]
		if b == '\n' {
			c.line++
			c.lineLen = 0
			i++
			lineStart = i
			continue
		}
		size := 1
		if b >= utf8.RuneSelf {
			if !utf8.FullRune(buf[i:]) && !atEOF {
				return i
			}
			var r rune
			r, size = utf8.DecodeRune(buf[i:])
			if r == utf8.RuneError && size == 1 {
				c.failed = fmt.Errorf("%s:%d: byte 0x%02x at column %d is not UTF-8; save the file as UTF-8", c.name, c.line, b, c.lineLen+1)
				return lineStart
			}
		}
		c.lineLen += size
		if c.lineLen > MaxLineBytes {
			c.failed = fmt.Errorf("%s:%d: line is longer than %d MiB, the limit for one dataset line; shorten the record (e.g. trim its abstracts) or split it", c.name, c.line, MaxLineBytes>>20)
			return lineStart
		}
		i += size
	}
	return len(buf)
}
