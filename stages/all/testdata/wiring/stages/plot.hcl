stage "plot" "x" {
  kind = "bar"
  data = [stage.insight_score.x]
}
