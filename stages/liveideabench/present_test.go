package liveideabench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

// The leaderboard's table on the page reads as its Markdown prints it:
// scores to three decimals (never 5.488700564971752), the Pareto front
// starred (never true / false), counts as counts; from its JSON file, or
// from its CSV when the block writes no JSON.
func TestLeaderboardPresentsItsTable(t *testing.T) {
	lb := &Leaderboard{Title: "Board", Synthetic: true, Mapping: "v2", Flexibility: FlexibilityPaper, Parse: ParseStrict, Models: []*ModelStats{
		{Model: "m-a", Rank: 1, Pareto: true, Ideas: 40, Scores: map[string]float64{"originality": 5.488700564971752, "feasibility": 6, "clarity": 7.25,
			"fluency": 5, "flexibility": 4.5, "average": 5.2}},
		{Model: "m-b", Rank: 2, Ideas: 38, Dropped: 2, Scores: map[string]float64{"originality": 4, "feasibility": 5, "clarity": 6, "fluency": 5, "flexibility": 4, "average": 4.5}},
	}}
	for _, formats := range [][]string{{"json", "markdown"}, {"csv"}} {
		files, err := lb.files("leaderboard.x", formats)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(files)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := stages.Present(leaderboardType{}, &stages.NodeOutput{Block: "leaderboard.x", Work: "compute", Output: out})
		if err != nil {
			t.Fatal(err)
		}
		if len(pr.Tables) != 1 || len(pr.Tables[0].Rows) != 2 {
			t.Fatalf("formats %v: tables %+v", formats, pr.Tables)
		}
		tab := pr.Tables[0]
		var cells []string
		for _, c := range tab.Rows[0] {
			cells = append(cells, c.Value)
		}
		text := strings.Join(cells, " ")
		if !strings.Contains(text, "5.489") || strings.Contains(text, "5.4887") || strings.Contains(text, "true") || strings.Contains(text, "false") || !strings.Contains(text, "*") {
			t.Errorf("formats %v: first row %q; want 5.489 and the Pareto star, no raw floats or booleans", formats, cells)
		}
		if formats[0] == "json" {
			if want := "1 m-a 5.489 6.000 7.250 5.000 4.500 5.200 * 40 0 0 0"; text != want {
				t.Errorf("first row %q, want %q", text, want)
			}
			if tab.Title != "Board" || tab.Synthetic == "" || len(tab.Notes) != 1 || !tab.IsNumeric(2) || tab.IsNumeric(1) {
				t.Errorf("table %+v", tab)
			}
		}
	}
}
