package cache

import (
	"os"
	"path/filepath"
)

// EnvDir names the environment variable that relocates the cache.
const EnvDir = "IDEAFLOW_CACHE_DIR"

// DefaultDir is where the cache lives when no flag names it: $IDEAFLOW_CACHE_DIR
// if set and non-empty, else <workdir>/.ideaflow/cache.
func DefaultDir(workdir string) string {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir
	}
	return filepath.Join(workdir, ".ideaflow", "cache")
}

// ResolveDir applies the precedence the CLI documents: an explicit --cache-dir
// flag, then $IDEAFLOW_CACHE_DIR, then <workdir>/.ideaflow/cache.
func ResolveDir(flagValue, workdir string) string {
	if flagValue != "" {
		return flagValue
	}
	return DefaultDir(workdir)
}
