stage "insight_score" "x" {
  ranks = stage.rank_ideas.x
}
