stage "contribution_compare" "x" {
  dimensions          = stage.contribution_dimensions.x
  relevance           = stage.contribution_relevance.search
  augmented_relevance = stage.contribution_relevance.x
  model               = model.gen_b
  sample              = 3
}
