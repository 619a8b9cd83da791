package batch

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Op is what a journal entry records of a submission (one input file, one
// batch). A submission's entries come in this order; each is recorded
// before the step it licenses, so that a crash at any point leaves a
// journal from which the next run can tell what may exist at the provider.
type Op string

const (
	// OpIntent: the submission's model and node keys, recorded before its
	// file is uploaded. An intent with nothing after it submitted nothing:
	// a batch is only ever created from an uploaded entry's file, so its
	// keys are free again (an orphaned input file may exist; it runs
	// nothing).
	OpIntent Op = "intent"
	// OpUploaded: the input file's id, recorded before the batch is
	// created (with the submission's id in its metadata). From here a batch
	// may exist: a resuming client looks for it by that metadata before it
	// creates one, and creates only if there is none.
	OpUploaded Op = "uploaded"
	// OpSubmitted: the batch's id, once the provider answered the creation.
	OpSubmitted Op = "submitted"
	// OpDone: every result of the batch was handed over (and accepted) or
	// the submission was found to have submitted nothing; its keys are free.
	OpDone Op = "done"
)

// Entry is one journal record.
type Entry struct {
	Op         Op        `json:"op"`
	Submission string    `json:"submission"`
	Time       time.Time `json:"time"`
	Model      string    `json:"model,omitempty"`   // intent
	Keys       []string  `json:"keys,omitempty"`    // intent: the node keys, one per input line (custom_id)
	FileID     string    `json:"file_id,omitempty"` // uploaded
	BatchID    string    `json:"batch_id,omitempty"`
	Note       string    `json:"note,omitempty"` // done: why, when nothing was submitted
}

// Journal is the durable record of submissions that makes batches
// resumable across runs and crashes. Its invariants, which the Client's
// guarantee (no request is submitted twice, kill -9 at any point included)
// rests on:
//
//  1. Record returns nil only once the entry is durable: it survives the
//     process being killed at any instant after, and an fsync'd file
//     survives power loss.
//  2. Entries returns every entry whose Record returned nil, in Record
//     order, plus possibly the entry of a Record interrupted by a crash,
//     whole or not at all, never torn or altered: a damaged entry that is
//     not the interrupted last one is an error, never skipped, because a
//     lost entry could let a request go out twice.
//  3. One writer at a time: a second Journal on the same store fails to
//     open while the first is open (two runs would each think the other's
//     intents abandoned).
//
// Entries never change once recorded; compaction, if any, keeps every
// submission that is not done.
type Journal interface {
	Record(e Entry) error
	Entries() ([]Entry, error)
	Close() error
}

// FileJournal is a Journal in an append-only file: one entry per line,
// "<crc32c of the JSON, 8 hex digits> <JSON>\n", each write fsync'd, the
// file locked (flock) while open.
type FileJournal struct {
	path    string
	f       *os.File
	entries []Entry
	size    int64 // bytes of whole entries: where the next one goes
	broken  error // a write that failed and could not be undone: no more entries
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// OpenFile opens (creating it and its folder if need be) the journal at
// path and reads it. A torn last line, left by a crash in the middle of a
// write, is cut off; any other damaged line fails the open.
func OpenFile(path string) (*FileJournal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("batch journal: %w", err)
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("batch journal: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("batch journal %s is in use by another ideaflow process (%v); let it finish, or stop it, and run again", path, err)
	}
	if errors.Is(statErr, os.ErrNotExist) {
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, fmt.Errorf("batch journal: %w", err)
		}
	}
	j := &FileJournal{path: path, f: f}
	good, err := j.read()
	j.size = good
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("batch journal %s: cut torn last line: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("batch journal %s: %w", path, err)
	}
	return j, nil
}

// read loads the entries and returns the length of the good prefix.
func (j *FileJournal) read() (int64, error) {
	data, err := io.ReadAll(j.f)
	if err != nil {
		return 0, fmt.Errorf("batch journal %s: %w", j.path, err)
	}
	entries, good, err := parse(j.path, data)
	j.entries = entries
	return good, err
}

// ReadFile reads a journal's entries without its lock, for a reader beside
// the run that holds it (`ideaflow batches`): a last line being written
// reads as torn and is left out. A missing file has no entries.
func ReadFile(path string) ([]Entry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("batch journal: %w", err)
	}
	entries, _, err := parse(path, data)
	return entries, err
}

// parse decodes a journal's lines, returning the entries and the length of
// the good prefix: a torn last line is cut off, any other damage fails.
func parse(path string, data []byte) ([]Entry, int64, error) {
	var entries []Entry
	var good int64
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 { // no newline: the write a crash interrupted
			return entries, good, nil
		}
		e, err := decodeLine(data[:i])
		if err != nil {
			if len(data) == i+1 { // the last line: a torn write
				return entries, good, nil
			}
			return nil, 0, fmt.Errorf("batch journal %s line %d is damaged (%v) and later entries follow it; it records which requests are already submitted, so ideaflow will not guess: restore the file from a backup, or check the provider's batch list (ideaflow batches) and move the file aside", path, n, err)
		}
		entries = append(entries, e)
		good += int64(i + 1)
		data = data[i+1:]
	}
	return entries, good, nil
}

func decodeLine(line []byte) (Entry, error) {
	var e Entry
	if len(line) < 10 || line[8] != ' ' {
		return e, errors.New("no checksum")
	}
	want, err := hex.DecodeString(string(line[:8]))
	if err != nil {
		return e, errors.New("no checksum")
	}
	body := line[9:]
	sum := crc32.Checksum(body, crcTable)
	if binary.BigEndian.Uint32(want) != sum {
		return e, errors.New("checksum mismatch")
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return e, fmt.Errorf("undecodable: %w", err)
	}
	return e, nil
}

func encodeLine(e Entry) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "%08x %s\n", crc32.Checksum(body, crcTable), body), nil
}

// Record appends e and fsyncs the file before returning. A write or fsync
// that fails (a full disk) is undone by cutting the file back to its last
// whole entry, so that a later entry never follows a torn one (which would
// make the journal unreadable, invariant 2); if even that fails, the
// journal refuses every later entry.
func (j *FileJournal) Record(e Entry) error {
	if j.broken != nil {
		return fmt.Errorf("batch journal %s: an earlier write failed and could not be undone (%v); no more entries are recorded", j.path, j.broken)
	}
	line, err := encodeLine(e)
	if err != nil {
		return fmt.Errorf("batch journal: encode: %w", err)
	}
	_, err = j.f.Write(line)
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		if terr := j.undo(); terr != nil {
			j.broken = terr
		}
		return fmt.Errorf("batch journal %s: write: %w", j.path, err)
	}
	j.size += int64(len(line))
	j.entries = append(j.entries, e)
	return nil
}

func (j *FileJournal) undo() error {
	if err := j.f.Truncate(j.size); err != nil {
		return err
	}
	_, err := j.f.Seek(j.size, io.SeekStart)
	return err
}

// Entries returns the entries read at open and recorded since.
func (j *FileJournal) Entries() ([]Entry, error) { return append([]Entry(nil), j.entries...), nil }

// Close releases the file and its lock.
func (j *FileJournal) Close() error { return j.f.Close() }

// Path is the journal's file.
func (j *FileJournal) Path() string { return j.path }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

var _ Journal = (*FileJournal)(nil)
