package datasets

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/internal/shareddata"
)

// The published v1 leaderboard loads, and its Average is the mean of its
// four dimension columns on every row.
func TestPublishedLeaderboard(t *testing.T) {
	publishedV1 := shareddata.Path(t, "liveideabench/results/LiveIdeaBench-202412.csv")
	items, err := Load("liveideabench-leaderboard", publishedV1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 20 {
		t.Fatalf("%d rows, want 20", len(items))
	}
	for i, it := range items {
		var r LeaderboardRow
		if err := json.Unmarshal(it.Record, &r); err != nil {
			t.Fatal(err)
		}
		if r.Rank != i+1 || it.ID != r.Model || r.Model == "" {
			t.Errorf("row %d: rank %d id %q model %q", i, r.Rank, it.ID, r.Model)
		}
		avg := (r.Fluency + r.Feasibility + r.Originality + r.Flexibility) / 4
		if math.Abs(avg-r.Average) > 1e-12 {
			t.Errorf("%s: mean of the four %.15f, Average %.15f", r.Model, avg, r.Average)
		}
	}
	var first LeaderboardRow
	_ = json.Unmarshal(items[0].Record, &first)
	want := LeaderboardRow{Rank: 1, Model: "google/gemini-pro-1.5", ModelShort: "gemini-pro-1.5", Fluency: 8.876354704711348,
		Feasibility: 6.839345637583893, Originality: 7.313968120805369, Flexibility: 7.666666666666667, Average: 7.674083782441819}
	if first != want {
		t.Errorf("first row %+v\nwant %+v", first, want)
	}
	var qwq LeaderboardRow
	_ = json.Unmarshal(items[2].Record, &qwq)
	if !qwq.OpenSource || qwq.Model != "qwen/qwq-32b-preview" {
		t.Errorf("third row %+v", qwq)
	}
}

func TestLeaderboardErrors(t *testing.T) {
	const header = "Rank,Model,Fluency,Feasibility,Originality,Flexibility,Average,Model_Short,Is_Open_Source\n"
	for _, tc := range []struct{ name, text, errSub string }{
		{"missing column", "Rank,Model,Fluency\n1,a,2\n", `board.csv:1: no "Feasibility" column`},
		{"bad number", header + "1,a,8,7,6,5,x,a,False\n", `board.csv:2: column Average: "x" is not a number`},
		{"bad rank", header + "0,a,8,7,6,5,6.5,a,False\n", `board.csv:2: column Rank: "0" is not a rank`},
		{"bad bool", header + "1,a,8,7,6,5,6.5,a,yes\n", `board.csv:2: column Is_Open_Source: "yes" is not True or False`},
		{"duplicate model", header + "1,a,8,7,6,5,6.5,a,False\n2,a,8,7,6,5,6.5,a,False\n", `board.csv:3: duplicate id "a" (first on line 2)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read("liveideabench-leaderboard", "board.csv", strings.NewReader(tc.text), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error %v, want %q", err, tc.errSub)
			}
		})
	}
}
