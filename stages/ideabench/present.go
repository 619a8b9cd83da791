package ideabench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// How IdeaBench's outputs read (stages.Presenter), where the schema's roles
// do not say enough: a generation exports one row per idea, a ranking its
// order as text, a reference filter its kept ids, a similarity one row per
// idea; an extracted target idea is the target's, not a generated one.
// The aggregates read as the default presents a stages.Score.

func (generateType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	var o struct {
		Ideas   []string `json:"ideas"`
		Dropped bool     `json:"dropped"`
	}
	if err := json.Unmarshal(out.Output, &o); err != nil {
		return nil, fmt.Errorf("decode generate_ideas output: %w", err)
	}
	pr := &stages.Presented{Dropped: o.Dropped}
	for j, idea := range o.Ideas {
		// item_idea_index is the "idea I" of rank_ideas' labels: the idea's
		// place among the item's ideas over its nodes in order.
		var itemIndex any
		if out.IdeasBefore >= 0 {
			itemIndex = out.IdeasBefore + j
		}
		pr.Rows = append(pr.Rows, stages.Row{{Name: "idea_index", Value: j}, {Name: "item_idea_index", Value: itemIndex}, {Name: "idea", Value: idea}})
		pr.Ideas = append(pr.Ideas, stages.Idea{Text: idea})
	}
	return pr, nil
}

func (rankType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	var o RankOutput
	if err := json.Unmarshal(out.Output, &o); err != nil {
		return nil, fmt.Errorf("decode rank_ideas output: %w", err)
	}
	row := stages.Row{{Name: "order"}, {Name: "target_letter"}, {Name: "target_rank"}, {Name: "n"}, {Name: "labels"}, {Name: "dropped", Value: o.Dropped}}
	pr := &stages.Presented{Dropped: o.Dropped}
	if !o.Dropped {
		row[0].Value, row[1].Value, row[2].Value, row[3].Value = strings.Join(o.Order, " > "), o.TargetLetter, o.TargetRank, o.N
		row[4].Value = labelsText(o.Labels)
		j := stages.Judgement{Judge: out.Model, Dimension: out.Block, Order: o.Order, Shown: o.Labels, Rationale: out.Raw}
		if o.TargetRank > 0 {
			rank := float64(o.TargetRank)
			j.Score = &rank
		}
		pr.Judgements = []stages.Judgement{j}
	}
	pr.Rows = []stages.Row{row}
	return pr, nil
}

// labelsText writes rank labels in letter order: "A=idea 1; B=target".
func labelsText(labels map[string]string) string {
	letters := make([]string, 0, len(labels))
	for l := range labels {
		letters = append(letters, l)
	}
	sort.Strings(letters)
	parts := make([]string, len(letters))
	for i, l := range letters {
		parts[i] = l + "=" + labels[l]
	}
	return strings.Join(parts, "; ")
}

func (filterType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	var o struct {
		References []struct {
			ID string `json:"id"`
		} `json:"references"`
		Dropped bool   `json:"dropped"`
		Reason  string `json:"reason"`
	}
	if err := json.Unmarshal(out.Output, &o); err != nil {
		return nil, fmt.Errorf("decode filter_references output: %w", err)
	}
	ids := make([]string, len(o.References))
	for j, r := range o.References {
		ids[j] = r.ID
	}
	var reason any
	if o.Reason != "" {
		reason = o.Reason
	}
	return &stages.Presented{Dropped: o.Dropped, Rows: []stages.Row{{
		{Name: "dropped", Value: o.Dropped}, {Name: "reason", Value: reason},
		{Name: "references", Value: len(ids)}, {Name: "reference_ids", Value: strings.Join(ids, ";")}}}}, nil
}

func (similarityType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	o, ok, err := DecodeSimilarity(out.Node.Label, out.Output)
	if err != nil {
		return nil, fmt.Errorf("decode similarity output: %w", err)
	}
	if !ok {
		return &stages.Presented{Helper: true}, nil // an embedding reply: its item's scores node has the rows
	}
	cols := func(method, index, p, r, f1 any, dropped bool) stages.Row {
		return stages.Row{{Name: "method", Value: method}, {Name: "idea_index", Value: index}, {Name: "precision", Value: p},
			{Name: "recall", Value: r}, {Name: "f1", Value: f1}, {Name: "dropped", Value: dropped}}
	}
	if o.Dropped {
		return &stages.Presented{Dropped: true, Rows: []stages.Row{cols(nil, nil, nil, nil, nil, true)}}, nil
	}
	pr := &stages.Presented{}
	for j, sc := range o.Scores {
		pr.Rows = append(pr.Rows, cols(o.Method, j, sc.Precision, sc.Recall, sc.F1, false))
	}
	return pr, nil
}

// extract_idea's idea is the target's (from the dataset or extracted from
// its abstract): exported, not shown as an idea a model generated.
func (t extractType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	pr.Ideas = nil
	return pr, nil
}
