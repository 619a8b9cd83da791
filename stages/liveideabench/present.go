package liveideabench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/report"
)

// How LiveIdeaBench's outputs read (stages.Presenter). An idea, a panel
// judgement and a fluency letter read by their schema roles (the
// default); the leaderboard lays out its table for the page, formatted as
// its Markdown prints it (three decimals, the interval over keywords in
// brackets, the Pareto front starred).

func (t leaderboardType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	var files stages.Files
	if err := json.Unmarshal(out.Output, &files); err != nil {
		return nil, fmt.Errorf("decode leaderboard output: %w", err)
	}
	for _, name := range sortedNames(files.Files) {
		text := files.Files[name]
		switch {
		case strings.HasSuffix(name, ".json"):
			var lb Leaderboard
			if err := json.Unmarshal([]byte(text), &lb); err != nil {
				return nil, fmt.Errorf("decode %s: %w", name, err)
			}
			pr.Tables = append(pr.Tables, lb.table(strings.TrimSuffix(name, ".json")))
		case strings.HasSuffix(name, ".csv") && files.Files[strings.TrimSuffix(name, ".csv")+".json"] == "":
			t, err := csvTable(strings.TrimSuffix(name, ".csv"), text)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", name, err)
			}
			pr.Tables = append(pr.Tables, t)
		}
	}
	return pr, nil
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// table is the leaderboard as its Markdown lays it out.
func (lb *Leaderboard) table(name string) stages.Table {
	cols := lb.columns()
	t := stages.Table{Name: name, Title: lb.Title}
	t.Header = []string{"Rank", "Model"}
	t.Numeric = []bool{true, false}
	for _, c := range cols {
		t.Header = append(t.Header, strings.ToUpper(c[:1])+c[1:])
		t.Numeric = append(t.Numeric, true)
	}
	t.Header = append(t.Header, "Pareto", "Ideas", "Refusals", "Dropped", "Missing judgements")
	t.Numeric = append(t.Numeric, false, true, true, true, true)
	for _, m := range lb.Models {
		row := []stages.Cell{{Value: rankText(m.Rank)}, {Value: m.Model}}
		for _, c := range cols {
			v, ok := m.Scores[c]
			row = append(row, stages.Cell{Value: num(v, ok), Rest: m.ciText(c)})
		}
		pareto := ""
		if m.Pareto {
			pareto = "*"
		}
		row = append(row, stages.Cell{Value: pareto}, stages.Cell{Value: strconv.Itoa(m.Ideas)}, stages.Cell{Value: strconv.Itoa(m.Refusals)},
			stages.Cell{Value: strconv.Itoa(m.Dropped)}, stages.Cell{Value: strconv.Itoa(m.Missing)})
		t.Rows = append(t.Rows, row)
	}
	if lb.Synthetic {
		t.Synthetic = report.SyntheticBanner
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Fluency mapping %s; flexibility: the percentile of %s; scores read by %s; average: mean of fluency, feasibility, originality and flexibility. Pareto (*): the originality-feasibility front.",
		lb.Mapping, flexibilityText[lb.Flexibility], parseText[lb.Parse]))
	if note := lb.intervalNote(); note != "" {
		t.Notes = append(t.Notes, note)
	}
	if unread := lb.unread(); unread > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("The authors' parser read nothing from %d answers (left out; the authors' code would have asked again).", unread))
	}
	return t
}

// csvTable is a leaderboard written without its JSON: its CSV, numbers to
// three decimals, the Pareto flag as a star.
func csvTable(name, text string) (stages.Table, error) {
	recs, err := csv.NewReader(bytes.NewReader([]byte(text))).ReadAll()
	if err != nil {
		return stages.Table{}, err
	}
	t := stages.Table{Name: name, Title: name}
	if len(recs) == 0 {
		return t, nil
	}
	t.Header = recs[0]
	t.Numeric = make([]bool, len(t.Header))
	for i, h := range t.Header {
		t.Numeric[i] = h != "model" && h != "family" && h != "pareto" && h != "synthetic"
	}
	for _, r := range recs[1:] {
		row := make([]stages.Cell, len(r))
		for i, v := range r {
			switch {
			case v == "true":
				v = "*"
			case v == "false":
				v = ""
			case t.IsNumeric(i) && v != "":
				if x, err := strconv.ParseFloat(v, 64); err == nil && x != float64(int64(x)) {
					v = num(x, true)
				}
			}
			row[i] = stages.Cell{Value: v}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
