stage "bootstrap" "x" {
  scores    = stage.insight_score.x
  resamples = 100
}
