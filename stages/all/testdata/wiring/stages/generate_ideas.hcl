stage "generate_ideas" "x" {
  references = stage.filter_references.x
  model      = model.gen_a
  n          = 2
}
