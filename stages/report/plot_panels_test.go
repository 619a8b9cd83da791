package report

import (
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

// perItem is a mean score over per-item values, as insight_score writes.
func perItem(vals ...float64) *stages.Score {
	s := &stages.Score{PerItem: map[string]float64{}, Count: len(vals)}
	for i, v := range vals {
		s.PerItem[string(rune('a'+i))] = v
		s.Value += v / float64(len(vals))
	}
	return s
}

// TestPlotPanelsAndIntervals: IdeaBench Fig. 4 as one figure, a panel per
// quality, its series named per panel; intervals bootstrapped from the
// per-item values (none where the score has none); a scatter's colour
// and size say what they show.
func TestPlotPanelsAndIntervals(t *testing.T) {
	params := stages.Params{"kind": "line", "x": "key[1]", "series": "key[0]", "separator": " ",
		"panels": "stage", "intervals": true, "title": "Figure 4",
		"panel_titles": map[string]string{"insight_score.novelty": "Novelty", "insight_score.feasibility": "Feasibility"}}
	inputs := []plotInputCase{
		{"data", "stage.insight_score.novelty", "filtered 1", perItem(0, 1.0/3, 2.0/3, 1)},
		{"data", "stage.insight_score.novelty", "all 1", perItem(0, 0, 1.0/3, 1)},
		{"data", "stage.insight_score.feasibility", "filtered 1", perItem(1.0/3, 1.0/3, 0, 0)},
		{"data", "stage.insight_score.feasibility", "all 1", val(0.2, 4)}, // no per-item values: no interval
	}
	files, fig := runPlot(t, params, inputs)
	checkSVG(t, files.Files["fig.svg"])
	if len(fig.Panels) != 2 || fig.Panels[0].Title != "Novelty" || fig.Panels[1].Title != "Feasibility" {
		t.Fatalf("panels %+v", fig.Panels)
	}
	var names []string
	for _, s := range fig.Series {
		names = append(names, s.Name)
	}
	if want := []string{"Novelty: filtered", "Novelty: all", "Feasibility: filtered", "Feasibility: all"}; !sameSet(names, want) || fig.Points != 4 {
		t.Errorf("series %v, %d points; want %v, 4", names, fig.Points, want)
	}
	for _, p := range fig.Panels {
		for _, s := range p.Series {
			q := s.Points[0]
			has := q.Lo != nil && q.Hi != nil
			if want := !(p.Title == "Feasibility" && s.Name == "all"); has != want {
				t.Errorf("%s %s: interval %v, want %v", p.Title, s.Name, has, want)
			}
			if has && (*q.Lo > q.Y || *q.Hi < q.Y) {
				t.Errorf("%s %s: %v outside [%v, %v]", p.Title, s.Name, q.Y, *q.Lo, *q.Hi)
			}
		}
	}

	_, sc := runPlot(t, stages.Params{"kind": "scatter", "size_label": "fluency", "color_label": "flexibility"}, []plotInputCase{
		{"data", "stage.liveideabench_score.originality", "a", val(7.1, 10)},
		{"data", "stage.liveideabench_score.originality", "b", val(6.0, 10)},
		{"y", "stage.liveideabench_score.feasibility", "a", val(6.5, 10)},
		{"y", "stage.liveideabench_score.feasibility", "b", val(7.0, 10)},
		{"size", "stage.liveideabench_score.fluency", "a", val(3, 10)},
		{"size", "stage.liveideabench_score.fluency", "b", val(9, 10)},
		{"color", "stage.liveideabench_score.flexibility", "a", val(5.5, 10)},
		{"color", "stage.liveideabench_score.flexibility", "b", val(6.5, 10)},
	})
	pts := sc.Series[0].Points
	if sc.SizeLabel != "fluency" || sc.ColorLabel != "flexibility" || pts[0].Color == nil || *pts[0].Color != 5.5 || *pts[1].Color != 6.5 {
		t.Errorf("scatter %+v", sc)
	}
}
