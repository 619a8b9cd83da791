stage "liveideabench_score" "x" {
  ideas      = stage.generate_from_keyword.x
  judgements = stage.judge_panel.x
  fluency    = stage.fluency.x
}
