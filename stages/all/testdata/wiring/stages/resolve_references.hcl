stage "resolve_references" "x" {
  reviews    = stage.llm_review.x
  literature = model.corpus
  as_of      = "2026-12-01"
}
