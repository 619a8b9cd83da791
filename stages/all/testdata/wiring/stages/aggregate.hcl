stage "aggregate" "x" {
  scores = stage.insight_score.x
}
