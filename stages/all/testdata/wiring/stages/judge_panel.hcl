stage "judge_panel" "x" {
  ideas           = stage.generate_from_keyword.x
  panel           = [model.judge_a, model.judge_b, model.judge_c]
  judges_per_idea = 2
}
