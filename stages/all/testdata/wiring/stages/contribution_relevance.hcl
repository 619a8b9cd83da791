stage "contribution_relevance" "x" {
  dimensions = stage.contribution_dimensions.x
  augment    = stage.embedding_filter.x
  model      = model.gen_b
}
