//go:build !linux

package cache

// spaceGuard is Linux-only (fallocate); elsewhere the free-space check and
// the headroom guard the writes.
type spaceGuard struct{}

func newSpaceGuard(string) *spaceGuard      { return nil }
func (g *spaceGuard) reserve(int64) error   { return nil }
func (g *spaceGuard) advance()              {}
func (g *spaceGuard) allocatedAhead() int64 { return 0 }
func (g *spaceGuard) close()                {}
