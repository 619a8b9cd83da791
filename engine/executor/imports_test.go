package executor

import (
	"os/exec"
	"strings"
	"testing"
)

// The executor is the seam a worker on another machine links: it and the
// packages under it (the JetStream queue, the rate limit) must not
// pull in the experiment language (HCL), the cache (Badger) or the engine.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/hashicorp/hcl", "github.com/zclconf/go-cty", "github.com/dgraph-io/badger",
			"github.com/ideaflow/ideaflow/cache", "github.com/ideaflow/ideaflow/engine/config",
		} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") || dep == "github.com/ideaflow/ideaflow/engine" {
				t.Errorf("engine/executor depends on %s", dep)
			}
		}
	}
}
