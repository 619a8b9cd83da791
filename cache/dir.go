package cache

import (
	"os"
	"path/filepath"
)

// EnvDir names the environment variable that relocates the cache.
const EnvDir = "IDEAFLOW_CACHE_DIR"

// DefaultDir is where the cache lives when no flag names it:
// $IDEAFLOW_CACHE_DIR if set and non-empty, else the user's cache folder
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches
// on macOS) + "/ideaflow", the way Go's build cache lives in GOCACHE: one
// cache per user, whatever folder a command runs from. Only where the user
// has no cache folder (no $HOME) does it fall back to
// <workdir>/.ideaflow/cache.
func DefaultDir(workdir string) string {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir
	}
	if base, err := os.UserCacheDir(); err == nil && base != "" {
		return filepath.Join(base, "ideaflow")
	}
	return filepath.Join(workdir, ".ideaflow", "cache")
}

// ResolveDir applies the precedence the CLI documents: an explicit --cache-dir
// flag, then $IDEAFLOW_CACHE_DIR, then the user's cache folder (DefaultDir).
func ResolveDir(flagValue, workdir string) string {
	if flagValue != "" {
		return flagValue
	}
	return DefaultDir(workdir)
}
