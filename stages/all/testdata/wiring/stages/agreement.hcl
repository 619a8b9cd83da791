stage "agreement" "x" {
  judgements = [stage.rank_ideas.x]
}
