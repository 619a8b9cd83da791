package cache

import (
	"path/filepath"
	"testing"
)

func TestResolveDirPrecedence(t *testing.T) {
	tests := []struct {
		name, flag, env, want string
	}{
		{"default: the user cache folder, whatever the working folder", "", "", filepath.Join("/home/u/.cache", "ideaflow")},
		{"env over default", "", "/shared/cache", "/shared/cache"},
		{"flag over env", "/mnt/flag-cache", "/shared/cache", "/mnt/flag-cache"},
		{"flag alone", "rel/cache", "", "rel/cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDir, tt.env)
			t.Setenv("XDG_CACHE_HOME", "/home/u/.cache")
			if got := ResolveDir(tt.flag, "/work/exp"); got != tt.want {
				t.Fatalf("ResolveDir(%q) with %s=%q = %q, want %q", tt.flag, EnvDir, tt.env, got, tt.want)
			}
			if tt.flag == "" {
				if got := DefaultDir("/work/exp"); got != tt.want {
					t.Fatalf("DefaultDir = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// Without a home there is no user cache folder: the working folder's
// .ideaflow/cache is the last resort.
func TestDefaultDirWithoutHome(t *testing.T) {
	t.Setenv(EnvDir, "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if got, want := DefaultDir("/work/exp"), filepath.Join("/work/exp", ".ideaflow", "cache"); got != want {
		t.Fatalf("DefaultDir = %q, want %q", got, want)
	}
}
