package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// checkContamination warns, once per generator model and dataset, about
// targets that may predate the model's knowledge_cutoff: the model may have
// read the paper whose idea it is asked to rediscover. The IdeaBench paper
// relies on this by hand ("models trained on data before January 1, 2024";
// targets after it); here it is checked. No warning where a stage between
// the generator and the dataset has published_after on or after the cutoff
// (filter_references drops and counts those targets).
func (l *loader) checkContamination() {
	byAddr := make(map[string]*StageInstance, len(l.exp.Stages))
	for _, inst := range l.exp.Stages {
		byAddr[inst.Address] = inst
	}
	seen := map[string]bool{}
	for _, inst := range l.exp.Stages {
		for _, p := range inst.Type.Params() {
			if !p.Generator || p.Kind != stages.ModelRef {
				continue
			}
			m := inst.Params.Model(p.Name)
			if m == nil || m.KnowledgeCutoff == "" {
				continue
			}
			cutoff, err := datasets.ParseDate(m.KnowledgeCutoff)
			if err != nil {
				continue // reported at the model block
			}
			ds, excluded := sourceDataset(inst, byAddr, cutoff, map[string]bool{})
			key := m.Address + "\x00" + ds
			if ds == "" || excluded || seen[key] {
				continue
			}
			seen[key] = true
			d := l.exp.Datasets[strings.TrimPrefix(ds, "dataset.")]
			if d == nil {
				continue
			}
			items, err := d.Items()
			if err != nil {
				continue // Build reports it
			}
			var early []string
			n := 0
			for _, it := range items {
				var r struct {
					Year int `json:"year"`
				}
				_ = json.Unmarshal(it.Record, &r) // a record without a year may predate anything
				if datasets.MayPredate(r.Year, cutoff) {
					n++
					if len(early) < 3 {
						y := "no year"
						if r.Year != 0 {
							y = fmt.Sprint(r.Year)
						}
						early = append(early, fmt.Sprintf("%s (%s)", it.ID, y))
					}
				}
			}
			if n == 0 {
				continue
			}
			r := inst.DeclRange
			if pr, ok := inst.ParamRanges[p.Name]; ok {
				r = pr
			}
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  fmt.Sprintf("%d of %d targets may predate %s's knowledge cutoff", n, len(items), m.Address),
				Detail: fmt.Sprintf("%s: %d of %d targets of %s were published before %s's knowledge_cutoff %s (a target with a year only counts from 1 January), e.g. %s: the model may have read them. "+
					"Exclude them with published_after = %q on the filter_references that feeds it (they are dropped and counted), or choose targets published later.",
					inst.Address, n, len(items), ds, m.Address, m.KnowledgeCutoff, strings.Join(early, ", "), m.KnowledgeCutoff),
				Subject: &r,
			})
		}
	}
}

// sourceDataset follows inst's inputs to the first dataset and reports
// whether an instance on the way drops targets published before cutoff
// (its published_after is on or after cutoff).
func sourceDataset(inst *StageInstance, byAddr map[string]*StageInstance, cutoff time.Time, visited map[string]bool) (string, bool) {
	if visited[inst.Address] {
		return "", false
	}
	visited[inst.Address] = true
	excludes := false
	if s := inst.Params.String("published_after"); s != "" {
		if t, err := datasets.ParseDate(s); err == nil && !t.Before(cutoff) {
			excludes = true
		}
	}
	for _, dep := range inst.Deps {
		if strings.HasPrefix(dep, "dataset.") {
			return dep, excludes
		}
		if up := byAddr[dep]; up != nil {
			if ds, ex := sourceDataset(up, byAddr, cutoff, visited); ds != "" {
				return ds, excludes || ex
			}
		}
	}
	return "", false
}
