package all

import (
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func TestEveryStageTypeRegistered(t *testing.T) {
	for _, name := range []string{"filter_references", "generate_ideas", "rank_ideas", "insight_score", "report"} {
		typ, ok := stages.Lookup(name)
		if !ok || typ.Name() != name {
			t.Errorf("stage type %q is not registered", name)
		}
	}
}
