package datasets

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/internal/shareddata"
)

// The real copy loads with the paper's counts (DESIGN §7).
func TestScholarIdeasRealCopy(t *testing.T) {
	realScholarIdeas := shareddata.Path(t, "scholareval/ScholarIdeas")
	items, err := Load("scholarideas", realScholarIdeas, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 118 {
		t.Fatalf("%d ideas, want 118", len(items))
	}
	domains := map[string]int{}
	byTypeAxis := map[string]int{}
	severity := map[string]int{}
	lines := 0
	for _, it := range items {
		var r ScholarIdea
		if err := json.Unmarshal(it.Record, &r); err != nil {
			t.Fatal(err)
		}
		if r.ID != it.ID || r.Cutoff == "" || r.Idea == "" {
			t.Errorf("%s: incomplete record", it.ID)
		}
		domains[r.Domain]++
		for _, l := range r.Rubric {
			lines++
			byTypeAxis[l.Type+"-"+l.Axis]++
			severity[l.Severity]++
		}
	}
	want := map[string]int{"ai": 40, "neuro": 33, "biochem": 25, "eco": 20}
	for d, n := range want {
		if domains[d] != n {
			t.Errorf("domain %s: %d ideas, want %d", d, domains[d], n)
		}
	}
	if lines != 1076 {
		t.Errorf("%d rubric lines, want 1076", lines)
	}
	for k, n := range map[string]int{"weakness-soundness": 711, "weakness-contribution": 164, "strength-contribution": 111, "strength-soundness": 90} {
		if byTypeAxis[k] != n {
			t.Errorf("%s: %d, want %d", k, byTypeAxis[k], n)
		}
	}
	if severity["major"] != 665 || severity["minor"] != 411 {
		t.Errorf("severity %v, want major 665 minor 411", severity)
	}
	// Ordered by domain, then numerically: ai_1, ai_2, ..., ai_10.
	if items[0].ID != "ai_1" || items[1].ID != "ai_2" || items[9].ID != "ai_10" {
		t.Errorf("order starts %s %s ... %s", items[0].ID, items[1].ID, items[9].ID)
	}
}

func writeIdea(t *testing.T, root, name, plan, rubric, cutoff string) {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, s := range map[string]string{name + ".txt": plan, name + ".jsonl": rubric, "cutoff.txt": cutoff} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const okLine = `{"statement": "S", "type": "weakness", "axis": "soundness", "severity": "major"}`

func TestScholarIdeasFormat(t *testing.T) {
	root := t.TempDir()
	// The second file ends without a newline; blank lines are skipped.
	writeIdea(t, root, "eco_2", "plan two", okLine+"\n\n"+strings.Replace(okLine, "major", "minor", 1), "2024-01-02\n")
	writeIdea(t, root, "eco_10", "plan ten", okLine+"\n", "2024-01-03")
	writeIdea(t, root, "ai_1", "plan one", okLine, "2023-05-06")
	items, err := Load("scholarideas", root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if strings.Join(ids, ",") != "ai_1,eco_2,eco_10" {
		t.Errorf("order %v", ids)
	}
	want := `{"id":"eco_2","domain":"eco","idea":"plan two","cutoff":"2024-01-02","rubric":[{"statement":"S","type":"weakness","axis":"soundness","severity":"major"},{"statement":"S","type":"weakness","axis":"soundness","severity":"minor"}]}`
	if string(items[1].Record) != want {
		t.Errorf("record\n%s\nwant\n%s", items[1].Record, want)
	}
	if items, err := Load("scholarideas", root, Options{Limit: 2}); err != nil || len(items) != 2 {
		t.Errorf("limit 2: %d items, %v", len(items), err)
	}
}

func TestScholarIdeasErrors(t *testing.T) {
	for _, tc := range []struct {
		name, folder, rubric, cutoff, want string
	}{
		{"bad axis", "ai_1", strings.Replace(okLine, "soundness", "clarity", 1), "2024-01-01", `ai_1.jsonl:1: axis "clarity" is not one of soundness, contribution`},
		{"bad type on line 2", "ai_1", okLine + "\n" + strings.Replace(okLine, "weakness", "neutral", 1), "2024-01-01", `ai_1.jsonl:2: type "neutral" is not one of strength, weakness`},
		{"unknown field", "ai_1", `{"statement": "S", "type": "weakness", "axis": "soundness", "severity": "major", "x": 1}`, "2024-01-01", `ai_1.jsonl:1: invalid JSON: unknown field "x"`},
		{"bad cutoff", "ai_1", okLine, "24/01/2024", `cutoff "24/01/2024" is not a date YYYY-MM-DD`},
		{"no rubric", "ai_1", "\n", "2024-01-01", "no rubric lines"},
		{"bad folder", "ai", okLine, "2024-01-01", `"ai" is not an idea folder named <domain>_<n>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeIdea(t, root, tc.folder, "plan", tc.rubric, tc.cutoff)
			_, err := Load("scholarideas", root, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Read("scholarideas", "x", strings.NewReader(""), Options{}); err == nil || !strings.Contains(err.Error(), "reads a folder") {
		t.Errorf("Read: %v", err)
	}
}
