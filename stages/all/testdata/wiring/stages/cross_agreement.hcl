stage "cross_agreement" "x" {
  rankings = [stage.rank_ideas.x]
  panels   = [stage.judge_panel.x]
}
