//go:build unix

package cache

import (
	"io/fs"
	"syscall"
)

// allocatedBytes counts blocks actually allocated: Badger preallocates its log
// files as sparse files far larger than their contents.
func allocatedBytes(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}
