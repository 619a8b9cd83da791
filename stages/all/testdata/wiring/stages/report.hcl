report "x" {
  rows    = stage.generate_ideas.x
  columns = [stage.insight_score.x]
}
