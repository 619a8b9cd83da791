package scholareval_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
)

// A bad param is reported at its attribute, with what to write instead.
func TestParamErrorsPointAtTheAttribute(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"op", `op         = "search"`, `op         = "papers"`, `op must be "snippets" or "search", not "papers"`},
		{"as_of", `as_of      = "2026-12-01"
  limit      = 2
}
stage "contribution_relevance"`, `as_of      = " "
  limit      = 2
}
stage "contribution_relevance"`, `as_of names the literature snapshot`},
		{"prompt", `stage "soundness_methods" "se" {
  ideas = dataset.ideas`, `stage "soundness_methods" "se" {
  prompt = "{{.Methods}}"
  ideas = dataset.ideas`, `Methods`},
		// The reviews at the end of the expanding chains, and a coverage
		// over several of them, are laid out only once the chains have
		// run; their templates are checked at Build all the same
		// (stages.ParamChecker), so validate reports them.
		{"late prompt", `stage "soundness_review" "se" {
  synthesis = stage.soundness_synthesis.se`, `stage "soundness_review" "se" {
  prompt    = "{{.Idae}}"
  synthesis = stage.soundness_synthesis.se`, `Idae`},
		{"coverage prompt", `stage "coverage" "scholareval" {`, `stage "coverage" "scholareval" {
  prompt = "{{.Reviw}}"`, `.Reviw is not a field here; available: .Plan .Review`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(pipelineHCL, "http://127.0.0.1:1/v1")
			if !strings.Contains(src, tc.from) {
				t.Fatalf("the experiment has no %q", tc.from)
			}
			dir := t.TempDir()
			if err := os.CopyFS(filepath.Join(dir, "ideas"), os.DirFS(sample+"ideas")); err != nil {
				t.Fatal(err)
			}
			corpus, _ := os.ReadFile(sample + "corpus.jsonl")
			os.WriteFile(filepath.Join(dir, "corpus.jsonl"), corpus, 0o644)
			os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(strings.Replace(src, tc.from, tc.to, 1)), 0o644)
			exp, diags := config.Load(dir, config.Options{})
			if !diags.HasErrors() {
				_, diags = engine.Build(exp)
			}
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) || !strings.Contains(diags.Error(), "exp.hcl:") {
				t.Errorf("diagnostics %v, want %q at exp.hcl", diags, tc.want)
			}
		})
	}
}
