# json_winners = false: the mock answers fields, not the authors' JSON.
stage "pairwise_preference" "x" {
  ideas        = dataset.scholarideas
  a            = [stage.soundness_review.x, stage.contribution_review.x]
  b            = [stage.llm_review.x]
  judge        = model.judge_a
  json_winners = false
}
