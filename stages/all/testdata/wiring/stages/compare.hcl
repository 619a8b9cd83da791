stage "compare" "x" {
  scores    = [stage.insight_score.x, stage.aggregate.x]
  resamples = 100
}
