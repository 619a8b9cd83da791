stage "reference_invalidity" "x" {
  reviews  = [stage.soundness_review.x, stage.llm_review.x]
  resolved = [stage.resolve_references.x]
}
