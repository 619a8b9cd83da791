package cache

import (
	"os"

	"golang.org/x/sys/unix"
)

// allocate makes path a file of size bytes whose blocks are allocated.
func allocate(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		f.Close()
		if err == unix.EOPNOTSUPP {
			return errNoAllocate
		}
		return err
	}
	return f.Close()
}
