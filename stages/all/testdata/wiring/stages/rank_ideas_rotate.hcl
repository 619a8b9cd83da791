# rank_ideas with every target position once (n + 1 = 3), for position_bias.
stage "rank_ideas" "rotate" {
  ideas        = stage.generate_ideas.x
  judge        = model.judge_a
  quality      = quality.q
  order        = "rotate"
  permutations = 3
}
