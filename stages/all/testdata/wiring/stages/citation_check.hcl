stage "citation_check" "x" {
  reviews = [stage.soundness_review.x, stage.contribution_review.x, stage.llm_review.x]
}
