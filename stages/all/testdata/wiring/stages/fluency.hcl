stage "fluency" "x" {
  ideas = stage.generate_from_keyword.x
  panel = [model.judge_a, model.judge_b]
}
