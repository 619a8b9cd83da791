stage "sanity_check" "x" {
  shuffled_words = stage.insight_score.x
  copy_reference = stage.insight_score.x
  target_oracle  = stage.insight_score.x
}
