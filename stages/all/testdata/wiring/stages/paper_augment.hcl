stage "paper_augment" "x" {
  queries    = stage.contribution_dimensions.x
  search     = stage.literature_search.papers
  literature = model.corpus
  as_of      = "2026-12-01"
}
