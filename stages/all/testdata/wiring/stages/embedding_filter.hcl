stage "embedding_filter" "x" {
  dimensions = stage.contribution_dimensions.x
  augment    = stage.paper_augment.x
  model      = model.embed
  top_k      = 2
}
