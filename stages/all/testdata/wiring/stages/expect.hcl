expect "x" {
  score     = stage.insight_score.x
  published = 0.5
  tolerance = 0.05
}
