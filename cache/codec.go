package cache

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/klauspost/compress/s2"
)

// Records use the binary encoding of wire.go rather than JSON: a cache hit
// decodes one record, and BenchmarkCodec shows JSON (base64 output,
// reflection) costing several times more per hit. Record bodies of model text
// are stored s2-compressed (format recordS2) when that saves at least an
// eighth: values are read through Badger's memory-mapped value log, so their
// size is what a re-run of a large cache keeps resident. The CRC covers the
// stored bytes, so damage is caught before decompression; SHA-256 of the
// output against OutputDigest is checked by Verify, Export and Import, which
// can afford it.
const (
	recordPlain byte = 1
	recordS2    byte = 2
	partsFormat byte = 1
	// compressMin is the body size below which compression is not tried.
	compressMin   = 256
	flagSynthetic = 1 << 0
	// flagRawRefs marks records whose attempts refer to raw text stored once
	// (see attempts); records written before it copy every attempt's raw.
	flagRawRefs = 1 << 1
	// flagAnswerKey marks records with an AnswerKey, stored last (records
	// written before it have none, and decode as before).
	flagAnswerKey = 1 << 2
	// flagAnswerer, flagFed and flagAdopted mark records with an Answerer,
	// a Fed list and an AdoptedFrom key, stored in that order after the
	// AnswerKey (records written before them have none).
	flagAnswerer = 1 << 3
	flagFed      = 1 << 4
	flagAdopted  = 1 << 5
	// flagMore marks records with fields added since (the last flag bit
	// spent): a uvarint of moreCached and moreObtained follows the
	// AdoptedFrom, then those fields in that order.
	flagMore     = 1 << 6
	moreCached   = 1 << 0 // Usage.CachedTokens
	moreObtained = 1 << 1 // Obtained
	// maxRecordBody refuses to inflate a damaged length prefix into a huge allocation.
	maxRecordBody = 1 << 30
)

// Attempt raw texts are written as a reference when they repeat text the
// record already holds: the accepted answer is normally Record.Raw and also
// the last attempt's Raw, and a repair re-ask repeats the previous answer, so
// copying each would store the largest field two or three times and push big
// answers toward Badger's value limit.
const (
	rawLiteral = 0 // a string follows
	rawIsFinal = 1 // same as Record.Raw
	// rawIsAttempt+i: same as attempt i's raw
	rawIsAttempt = 2
)

func (e *encoder) attempts(final string, as []Attempt) {
	e.uvarint(uint64(len(as)))
	for i, a := range as {
		e.str(a.Error)
		switch ref := rawRef(final, as[:i], a.Raw); ref {
		case rawLiteral:
			e.uvarint(rawLiteral)
			e.str(a.Raw)
		default:
			e.uvarint(uint64(ref))
		}
		e.varint(int64(a.Status))
		if a.Repair {
			e.byte(1)
		} else {
			e.byte(0)
		}
		e.varint(a.Duration)
	}
}

// rawRef finds raw among what is already stored; empty raws stay literal
// (they cost one byte either way).
func rawRef(final string, earlier []Attempt, raw string) int {
	if raw == "" {
		return rawLiteral
	}
	if raw == final {
		return rawIsFinal
	}
	for j, p := range earlier {
		if p.Raw == raw {
			return rawIsAttempt + j
		}
	}
	return rawLiteral
}

func (d *decoder) attempts(final string, refs bool) []Attempt {
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
		if !refs {
			as[i].Raw = d.str()
		} else {
			switch ref := d.uvarint(); {
			case ref == rawLiteral:
				as[i].Raw = d.str()
			case ref == rawIsFinal:
				as[i].Raw = final
			case ref-rawIsAttempt < uint64(i):
				as[i].Raw = as[ref-rawIsAttempt].Raw
			default:
				d.fail(fmt.Errorf("attempt %d refers to raw text %d", i, ref))
			}
		}
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
	var flags byte = flagRawRefs
	if rec.Synthetic {
		flags |= flagSynthetic
	}
	if rec.AnswerKey != "" {
		flags |= flagAnswerKey
	}
	if rec.Answerer != nil {
		flags |= flagAnswerer
	}
	if len(rec.Fed) > 0 {
		flags |= flagFed
	}
	if rec.AdoptedFrom != "" {
		flags |= flagAdopted
	}
	var more uint64
	if rec.Usage.CachedTokens != 0 {
		more |= moreCached
	}
	if rec.Obtained != "" {
		more |= moreObtained
	}
	if more != 0 {
		flags |= flagMore
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
	e.attempts(rec.Raw, rec.Attempts)
	if rec.AnswerKey != "" {
		e.str(rec.AnswerKey)
	}
	if rec.Answerer != nil {
		e.answerer(*rec.Answerer)
	}
	if len(rec.Fed) > 0 {
		e.uvarint(uint64(len(rec.Fed)))
		for _, a := range rec.Fed {
			e.answerer(a)
		}
	}
	if rec.AdoptedFrom != "" {
		e.str(rec.AdoptedFrom)
	}
	if more != 0 {
		e.uvarint(more)
		if more&moreCached != 0 {
			e.varint(rec.Usage.CachedTokens)
		}
		if more&moreObtained != 0 {
			e.str(rec.Obtained)
		}
	}
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
	}
	rec.Attempts = d.attempts(rec.Raw, flags&flagRawRefs != 0)
	if flags&flagAnswerKey != 0 {
		rec.AnswerKey = d.str()
	}
	if flags&flagAnswerer != 0 {
		a := d.answerer()
		rec.Answerer = &a
	}
	if flags&flagFed != 0 {
		n := d.uvarint()
		// Each answerer takes at least 3 bytes, which bounds n before allocating.
		if n == 0 || n > uint64(len(d.s))/3 {
			d.fail(fmt.Errorf("fed count %d exceeds value size", n))
		} else {
			rec.Fed = make([]Answerer, n)
			for i := range rec.Fed {
				rec.Fed[i] = d.answerer()
			}
		}
	}
	if flags&flagAdopted != 0 {
		rec.AdoptedFrom = d.str()
	}
	if flags&flagMore != 0 {
		more := d.uvarint()
		if more&moreCached != 0 {
			rec.Usage.CachedTokens = d.varint()
		}
		if more&moreObtained != 0 {
			rec.Obtained = d.str()
		}
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

func (e *encoder) answerer(a Answerer) {
	e.str(a.Class)
	e.str(a.Identity)
	if a.Synthetic {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

func (d *decoder) answerer() Answerer {
	return Answerer{Class: d.str(), Identity: d.str(), Synthetic: d.byte() == 1}
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
