stage "position_bias" "x" {
  rotate = stage.rank_ideas.rotate
}
