stage "contribution_review" "x" {
  dimensions = stage.contribution_dimensions.x
  compare    = stage.contribution_compare.x
  model      = model.gen_b
}
