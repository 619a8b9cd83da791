stage "coverage" "x" {
  ideas      = dataset.scholarideas
  reviews    = [stage.llm_review.x]
  judge      = model.judge_a
  prometheus = false
}
