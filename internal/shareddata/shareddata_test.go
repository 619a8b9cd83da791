package shareddata

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLocate(t *testing.T) {
	tmp := t.TempDir()
	for _, tt := range []struct {
		name, env, want, why string
	}{
		{"the variable wins", tmp, tmp, ""},
		{"a variable naming no folder is no data", filepath.Join(tmp, "absent"), "", "is not a folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envDir, tt.env)
			got, why := locate()
			if got != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("locate() = %q, %q; want %q, %q", got, why, tt.want, tt.why)
			}
		})
	}
}
