stage "rank_ideas" "x" {
  ideas   = stage.generate_ideas.x
  judge   = model.judge_a
  quality = quality.q
}
