stage "contribution_relevance" "x" {
  dimensions = stage.contribution_dimensions.x
  search     = stage.literature_search.papers
  augment    = stage.paper_augment.x
  model      = model.gen_b
}
