//go:build !unix

package cache

import "io/fs"

// allocatedBytes falls back to the apparent size where block counts are not
// exposed; it overstates Badger's sparse preallocated log files.
func allocatedBytes(info fs.FileInfo) int64 {
	return info.Size()
}
