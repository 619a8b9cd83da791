package datasets

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// The published LiveIdeaBench leaderboard (results/LiveIdeaBench-202412.csv
// in the authors' repository): one row per model with its four dimension
// scores and their average. A run's leaderboard is shown beside it.

func init() {
	readers["liveideabench-leaderboard"] = readLeaderboard
	formatDocs["liveideabench-leaderboard"] = FormatDoc{
		Name: "liveideabench-leaderboard",
		Doc: "A published LiveIdeaBench leaderboard, as the authors' results CSV: a header row, then one row per model. " +
			"Scores must be numbers; a missing column is an error at the header, a bad cell at its line. Other columns are ignored.",
		ID: "the Model column",
		Columns: []Field{
			{Name: "Rank", Type: "number (whole)", Required: true, Doc: "the published rank, 1 = best"},
			{Name: "Model", Type: "string", Required: true, Doc: "the model as the leaderboard names it (an OpenRouter-style name); becomes id and model"},
			{Name: "Fluency", Type: "number", Required: true, Doc: "becomes fluency"},
			{Name: "Feasibility", Type: "number", Required: true, Doc: "becomes feasibility"},
			{Name: "Originality", Type: "number", Required: true, Doc: "becomes originality"},
			{Name: "Flexibility", Type: "number", Required: true, Doc: "becomes flexibility"},
			{Name: "Average", Type: "number", Required: true, Doc: "becomes average: the mean of the four"},
			{Name: "Model_Short", Type: "string", Doc: "becomes model_short: the name without its vendor prefix"},
			{Name: "Is_Open_Source", Type: "bool", Doc: "becomes open_source (True/False)"},
		},
		Fields: []Field{
			{Name: "rank", Type: "number (whole)", Required: true, Doc: "the published rank"},
			{Name: "model", Type: "string", Required: true, Doc: "the model's name on the leaderboard"},
			{Name: "model_short", Type: "string", Doc: "its short name"},
			{Name: "fluency", Type: "number", Required: true, Doc: "published fluency"},
			{Name: "feasibility", Type: "number", Required: true, Doc: "published feasibility"},
			{Name: "originality", Type: "number", Required: true, Doc: "published originality"},
			{Name: "flexibility", Type: "number", Required: true, Doc: "published flexibility"},
			{Name: "average", Type: "number", Required: true, Doc: "published average of the four"},
			{Name: "open_source", Type: "bool", Doc: "whether the model's weights are open"},
		},
	}
}

// LeaderboardRow is one model of a published leaderboard (the record of a
// liveideabench-leaderboard item).
type LeaderboardRow struct {
	Rank        int     `json:"rank"`
	Model       string  `json:"model"`
	ModelShort  string  `json:"model_short,omitempty"`
	Fluency     float64 `json:"fluency"`
	Feasibility float64 `json:"feasibility"`
	Originality float64 `json:"originality"`
	Flexibility float64 `json:"flexibility"`
	Average     float64 `json:"average"`
	OpenSource  bool    `json:"open_source,omitempty"`
}

func readLeaderboard(name string, r io.Reader, opts Options) ([]Item, error) {
	c := newCollector(name, opts)
	cr, cols, err := openCSV(name, r)
	if err != nil {
		return nil, err
	}
	for _, need := range []string{"Rank", "Model", "Fluency", "Feasibility", "Originality", "Flexibility", "Average"} {
		if _, ok := cols[need]; !ok {
			return nil, c.errorf(1, "no %q column (have %s); a liveideabench-leaderboard needs Rank, Model, Fluency, Feasibility, Originality, Flexibility and Average", need, columnList(cols))
		}
	}
	for !c.full() {
		rec, line, err := nextCSV(name, cr)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		cell := func(col string) string {
			if i, ok := cols[col]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		num := func(col string) (float64, error) {
			v, err := strconv.ParseFloat(cell(col), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, c.errorf(line, "column %s: %q is not a number", col, cell(col))
			}
			return v, nil
		}
		row := LeaderboardRow{Model: cell("Model"), ModelShort: cell("Model_Short")}
		if row.Rank, err = strconv.Atoi(cell("Rank")); err != nil || row.Rank < 1 {
			return nil, c.errorf(line, "column Rank: %q is not a rank (a whole number from 1)", cell("Rank"))
		}
		for _, f := range []struct {
			col string
			dst *float64
		}{{"Fluency", &row.Fluency}, {"Feasibility", &row.Feasibility}, {"Originality", &row.Originality}, {"Flexibility", &row.Flexibility}, {"Average", &row.Average}} {
			if *f.dst, err = num(f.col); err != nil {
				return nil, err
			}
		}
		switch v := cell("Is_Open_Source"); strings.ToLower(v) {
		case "true":
			row.OpenSource = true
		case "false", "":
		default:
			return nil, c.errorf(line, "column Is_Open_Source: %q is not True or False", v)
		}
		if err := c.add(line, row.Model, row); err != nil {
			return nil, err
		}
	}
	return c.items, nil
}
