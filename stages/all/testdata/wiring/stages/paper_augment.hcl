stage "paper_augment" "x" {
  queries         = stage.contribution_dimensions.x
  relevance       = stage.contribution_relevance.search
  literature      = model.corpus
  as_of           = "2026-12-01"
  recommendations = 2
  references      = 2
}
