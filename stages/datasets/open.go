package datasets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Size bounds of the files a dataset reads. A dataset's records are held in
// memory for the run, so MaxDatasetBytes is what one file may bring; the
// files of a ScholarIdeas idea are a research plan, a rubric and a date,
// read whole: a few kB each, so MaxIdeaFileBytes is far past any real one
// (a 1 GB plan took 4.1 GB to load before it was bounded).
const (
	MaxDatasetBytes  int64 = 4 << 30
	MaxIdeaFileBytes int64 = 4 << 20
)

// OpenRegular opens path for reading when it is a regular file of at most
// max bytes (0: any size). A named pipe, device or socket is refused before
// a byte is read: opening one for reading would block (a FIFO) or never end
// (/dev/zero). The file is opened without blocking and checked on the open
// descriptor, so a path swapped for a pipe after a check cannot hang the
// read either.
func OpenRegular(path string, max int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no file exists at %s", path)
		}
		return nil, err // *fs.PathError says "open PATH: ..."
	}
	st, err := f.Stat()
	if err == nil {
		err = CheckRegular(path, st, max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckRegular refuses what st says is not a regular file of at most max
// bytes (0: any size), naming path.
func CheckRegular(path string, st fs.FileInfo, max int64) error {
	m := st.Mode()
	switch {
	case m.IsDir():
		return fmt.Errorf("%s is a folder, not a file", path)
	case m&fs.ModeNamedPipe != 0:
		return fmt.Errorf("%s is a named pipe, not a regular file (reading it would wait for a writer); give the path of a file", path)
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return fmt.Errorf("%s is a device, not a regular file; give the path of a file", path)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s is a socket, not a regular file; give the path of a file", path)
	case !m.IsRegular():
		return fmt.Errorf("%s is not a regular file; give the path of a file", path)
	case max > 0 && st.Size() > max:
		return fmt.Errorf("%s is %s, over the %s limit for this file", path, ByteSize(st.Size()), ByteSize(max))
	}
	return nil
}

// ReadRegular reads the regular file at path whole, refusing one of more
// than max bytes (see OpenRegular); the read stops at max+1 bytes in case
// the file grew after it was checked.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(b)) > max {
		return nil, fmt.Errorf("%s grew past the %s limit for this file while it was read", path, ByteSize(max))
	}
	return b, nil
}

// CheckFolder refuses a path that is not a folder.
func CheckFolder(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no folder exists at %s", path)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", path)
	}
	return nil
}

// ByteSize prints a size the way the limits are declared: 4 MiB, 1.5 GiB.
func ByteSize(n int64) string {
	const k = 1024
	switch {
	case n >= k*k*k:
		return trimFloat(float64(n)/(k*k*k)) + " GiB"
	case n >= k*k:
		return trimFloat(float64(n)/(k*k)) + " MiB"
	case n >= k:
		return trimFloat(float64(n)/k) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}

// IsFolderFormat reports whether a format's path is a folder (scholarideas)
// rather than a file.
func IsFolderFormat(format string) bool {
	_, ok := folderReaders[format]
	return ok
}
