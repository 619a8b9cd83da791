package cache

import (
	"path/filepath"
	"testing"
)

func TestResolveDirPrecedence(t *testing.T) {
	tests := []struct {
		name, flag, env, want string
	}{
		{"default", "", "", filepath.Join("/work/exp", ".ideaflow", "cache")},
		{"env over default", "", "/shared/cache", "/shared/cache"},
		{"flag over env", "/mnt/flag-cache", "/shared/cache", "/mnt/flag-cache"},
		{"flag alone", "rel/cache", "", "rel/cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDir, tt.env)
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
