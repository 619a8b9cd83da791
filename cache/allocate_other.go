//go:build !linux

package cache

// allocate is Linux-only (fallocate); elsewhere the cache keeps its reserve
// by refusing writes alone (checkSpace).
func allocate(string, int64) error { return errNoAllocate }
