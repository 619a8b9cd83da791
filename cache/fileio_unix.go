//go:build unix

package cache

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps path read-only. Logs are preallocated sparse files of up to
// twice valueLogFileSize, so reading one into memory would cost that much;
// a mapping costs only the pages read.
func mapFile(path string) (data []byte, unmap func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Size() == 0 {
		return nil, func() {}, nil
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return data, func() { _ = unix.Munmap(data) }, nil
}

// lockDir takes the lock Badger takes on a cache folder (flock on the folder
// itself): shared for reading, exclusive for writing. It fails at once when
// the lock is held the other way. The lock is on this descriptor alone, so
// Badger's own lock conflicts with an exclusive one: release it first.
func lockDir(dir string, exclusive bool) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w%s", ErrLocked, lockHolder(dir))
	}
	return func() { f.Close() }, nil
}
