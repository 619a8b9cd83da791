package similarity

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// BERTScore with special tokens as bert_score handles them, against golden
// vectors (testdata/bertscore_special.json): crafted token vectors with
// [CLS] and [SEP] on both sides, and the P, R and F of bert_score 0.3.13's
// greedy_cos_idf for them, computed from its formula (cosines over every
// token, special ones included; best match per token; [CLS] and [SEP]
// weighing 0, with or without idf; a side of only special tokens scoring
// 0), and beside it the scores with the special tokens dropped before
// matching, ideaflow's former handling, which differ by up to 0.086 in F.
func TestBERTScoreSpecialGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/bertscore_special.json")
	if err != nil {
		t.Fatal(err)
	}
	type prf struct{ P, R, F float64 }
	var cases []struct {
		Name        string      `json:"name"`
		Candidate   [][]float64 `json:"candidate"`
		Reference   [][]float64 `json:"reference"`
		CandSpecial []bool      `json:"candidate_special"`
		RefSpecial  []bool      `json:"reference_special"`
		CandW       []float64   `json:"candidate_weights"`
		RefW        []float64   `json:"reference_weights"`
		BERTScore   prf         `json:"bert_score"`
		Dropped     prf         `json:"special_dropped"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := Match(c.Candidate, c.Reference).ScoreSpecial(c.CandW, c.RefW, c.CandSpecial, c.RefSpecial)
			if !near(got.Precision, c.BERTScore.P) || !near(got.Recall, c.BERTScore.R) || !near(got.F1, c.BERTScore.F) {
				t.Errorf("kept: %+v, want bert_score's %+v", got, c.BERTScore)
			}
			// Dropped before matching: the former handling.
			keep := func(vs [][]float64, w []float64, sp []bool) ([][]float64, []float64) {
				var ov [][]float64
				var ow []float64
				for k, v := range vs {
					if !sp[k] {
						ov = append(ov, v)
						if w != nil {
							ow = append(ow, w[k])
						}
					}
				}
				return ov, ow
			}
			cv, cw := keep(c.Candidate, c.CandW, c.CandSpecial)
			rv, rw := keep(c.Reference, c.RefW, c.RefSpecial)
			d := Match(cv, rv).Score(cw, rw)
			if !near(d.Precision, c.Dropped.P) || !near(d.Recall, c.Dropped.R) || !near(d.F1, c.Dropped.F) {
				t.Errorf("dropped: %+v, want %+v", d, c.Dropped)
			}
		})
	}
}
