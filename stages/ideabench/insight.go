package ideabench

import (
	"encoding/json"
	"fmt"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

type insightType struct{}

func (insightType) Name() string    { return "insight_score" }
func (insightType) Version() string { return "2" } // 2: Extra "mean_rank"

func (insightType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ranks", Kind: stages.Input, Required: true, Accepts: []string{"rank_ideas"}, Doc: "the rankings to score"},
		{Name: "summary", Kind: stages.String, Default: "insight", Doc: `the Score's value: "insight" (the Insight Score) or "mean_rank" (the target's average absolute rank, the paper's Fig. 6); the other is in the score's extra values`},
		parseParam,
	}
}

func (insightType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	ranks, err := stages.RequireInput(inst.Params, "ranks")
	if err != nil {
		return nil, err
	}
	summary := inst.Params.String("summary")
	if err := oneOf("summary", summary, "insight", "mean_rank"); err != nil {
		return nil, err
	}
	parse, err := parseOf(inst.Params)
	if err != nil {
		return nil, err
	}
	deps := stages.AllDeps("ranks", ranks)
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				s, err := insightParsed(in, summary, parse)
				if err != nil {
					return nil, err
				}
				return stages.EncodeOutput(s)
			}}, nil
		},
	}}, nil
}

// InsightScore is the paper's Insight Score over rank_ideas outputs:
//
//	I = mean over targets of (target_rank - 1) / n,  target_rank in 1..n+1
//
// where a target ranked under several permutations contributes the mean over
// them. A target counts only when every one of its permutations was ranked,
// so every scored target weighs the same position-bias control; one with a
// failed ranking counts as missing. Dropped targets (too few references) are
// excluded and counted in Extra["dropped"]. Extra["mean_rank"] is the
// target's average absolute rank (1..n+1) over the scored targets, the
// quantity of the paper's Figure 6. Rankings at different n are an
// error: the paper shows the score shifts with n, so they must not be mixed.
func InsightScore(in []stages.In) (*stages.Score, error) {
	type acc struct {
		sum, rankSum   float64
		perms          int
		missing, dropd bool
	}
	var order []string
	byItem := map[string]*acc{}
	n, nItem := 0, ""
	for _, x := range in {
		item := x.Node.Item
		a := byItem[item]
		if a == nil {
			a = &acc{}
			byItem[item] = a
			order = append(order, item)
		}
		if x.Output == nil {
			a.missing = true
			continue
		}
		var r RankOutput
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode ranking of %q: %w", item, err)
		}
		if r.Dropped {
			a.dropd = true
			continue
		}
		if r.N < 1 || r.TargetRank < 1 || r.TargetRank > r.N+1 {
			return nil, fmt.Errorf("ranking of %q has target rank %d with n = %d; want 1..n+1", item, r.TargetRank, r.N)
		}
		if n == 0 {
			n, nItem = r.N, item
		} else if r.N != n {
			return nil, fmt.Errorf("targets %q and %q were ranked with different numbers of ideas (n = %d and %d); Insight Scores are only comparable at equal n", nItem, item, n, r.N)
		}
		a.sum += float64(r.TargetRank-1) / float64(r.N)
		a.rankSum += float64(r.TargetRank)
		a.perms++
	}
	s := &stages.Score{Extra: map[string]float64{}, PerItem: map[string]float64{}}
	dropped := 0
	total, rankTotal := 0.0, 0.0
	for _, item := range order {
		a := byItem[item]
		switch {
		case a.dropd:
			dropped++
		case a.missing:
			s.Missing++
		default:
			v := a.sum / float64(a.perms)
			s.PerItem[item] = v
			total += v
			rankTotal += a.rankSum / float64(a.perms)
			s.Count++
		}
	}
	if s.Count > 0 {
		s.Value = total / float64(s.Count)
		s.Extra["n"] = float64(n)
		s.Extra["mean_rank"] = rankTotal / float64(s.Count)
	}
	s.Extra["dropped"] = float64(dropped)
	return s, nil
}

// insightParsed is the insight_score node: the chosen reading and summary,
// with the other reading's value beside it in Extra ("strict", "authors").
func insightParsed(in []stages.In, summary, parse string) (*stages.Score, error) {
	pick := func(s *stages.Score) *stages.Score {
		if summary == "mean_rank" && s.Count > 0 {
			s.Extra["insight"] = s.Value
			s.Value = s.Extra["mean_rank"]
		}
		return s
	}
	strict, err := InsightScore(in)
	if err != nil {
		return nil, err
	}
	strict = pick(strict)
	if parse == "strict" {
		return strict, nil
	}
	authors, err := AuthorsInsightScore(in)
	if err != nil {
		return nil, err
	}
	authors = pick(authors)
	authors.Extra["strict"] = strict.Value
	authors.Extra["authors"] = authors.Value
	if parse == "authors_minus_strict" {
		authors.Value -= strict.Value
	}
	return authors, nil
}

// AuthorsInsightScore is the Insight Score as the authors' analysis
// computes it from their parse of the same answers (analyze_results.py
// avg_rel_rank at 9dbd125):
//
//	I = mean over read targets of (target_rank - 1) / (len(order) - 1)
//
// where order is what their parser read (authors_parse), repeats and
// missing letters included, and a one-letter order counts 0. A target
// whose letter their parser did not find (or whose prompt their code could
// not format) is left out, as their analysis leaves it, and counted in
// Extra "unread"; with several permutations a target counts when all were
// read. A ranking cached before authors_parse existed counts the target in
// Missing. Extra "mean_rank" is the target's average rank as read.
func AuthorsInsightScore(in []stages.In) (*stages.Score, error) {
	type acc struct {
		sum, rankSum           float64
		perms                  int
		missing, dropd, unread bool
	}
	var order []string
	byItem := map[string]*acc{}
	for _, x := range in {
		item := x.Node.Item
		a := byItem[item]
		if a == nil {
			a = &acc{}
			byItem[item] = a
			order = append(order, item)
		}
		if x.Output == nil {
			a.missing = true
			continue
		}
		var r RankOutput
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode ranking of %q: %w", item, err)
		}
		switch {
		case r.Dropped:
			a.dropd = true
			continue
		case r.AuthorsParse == nil:
			a.missing = true
			continue
		}
		rel, ok := format.IdeaBenchRelativeRank(r.AuthorsParse.Order, r.AuthorsParse.TargetLetter)
		if !ok {
			a.unread = true
			continue
		}
		a.sum += rel
		a.rankSum += float64(r.AuthorsParse.TargetRank)
		a.perms++
	}
	s := &stages.Score{Extra: map[string]float64{}, PerItem: map[string]float64{}}
	dropped, unread := 0, 0
	total, rankTotal := 0.0, 0.0
	for _, item := range order {
		a := byItem[item]
		switch {
		case a.dropd:
			dropped++
		case a.missing:
			s.Missing++
		case a.unread:
			unread++
		default:
			v := a.sum / float64(a.perms)
			s.PerItem[item] = v
			total += v
			rankTotal += a.rankSum / float64(a.perms)
			s.Count++
		}
	}
	if s.Count > 0 {
		s.Value = total / float64(s.Count)
		s.Extra["mean_rank"] = rankTotal / float64(s.Count)
	}
	s.Extra["dropped"] = float64(dropped)
	s.Extra["unread"] = float64(unread)
	return s, nil
}
