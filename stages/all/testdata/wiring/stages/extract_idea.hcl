stage "extract_idea" "x" {
  targets = stage.filter_references.x
  model   = model.judge_a
}
