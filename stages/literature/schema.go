package literature

import "github.com/ideaflow/ideaflow/stages"

// What the dataset builder's stage types give and read (stages.Schema).

// queryCriteria are the members of which a target query needs one.
var queryCriteria = []string{"query", "venues", "fields_of_study", "year", "publication_date_or_year"}

var papersGives = []stages.Field{
	{Name: "papers", Type: stages.ObjectsField, Doc: "the papers found (null where an id is unknown)"},
	{Name: "total", Type: stages.NumberField, Optional: true, Doc: "matches the source reports"},
	{Name: "retrieved", Type: stages.TextField, Optional: true, Doc: "when the source answered"},
}

func (findTargetsType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: papersGives,
		Needs: []stages.Need{{Input: "queries", Fields: queryCriteria, Why: "the query's criterion"}}}
}

func (lookupPapersType) Schema(stages.Params) stages.Schema {
	// Its items' ids are the paper ids: no record field is read.
	return stages.Schema{Gives: stages.With(papersGives, stages.Field{Name: "ids", Type: stages.TextsField, Doc: "the ids asked for"})}
}

// targetsNeed is what reads the targets found (a dataset's item ids are
// the paper ids, and its records are read as they are).
func targetsNeed(p stages.Params) []stages.Need {
	if t := p.Input("targets"); t != nil && t.Type == "dataset" {
		return nil
	}
	return []stages.Need{{Input: "targets", Fields: []string{"papers"}, Why: "the targets found"}, stages.Whole("targets")}
}

func (fetchReferencesType) Schema(p stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "paper_id", Type: stages.TextField, Doc: "the paper whose references these are"},
			{Name: "references", Type: stages.ObjectsField, Doc: "its references, with intents and contexts"},
			{Name: "retrieved", Type: stages.TextField, Optional: true, Doc: "when the source answered"},
		},
		Needs: targetsNeed(p),
	}
}

func (writeDatasetType) Schema(p stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.FilesFields,
		Needs: append(targetsNeed(p), stages.Need{Input: "references", Fields: []string{"references"}, Why: "the targets' references"},
			stages.Whole("references"), stages.Need{Input: "targets", Fields: []string{stages.AllFields}, Optional: true, Why: "the target records, as they are"})}
}
