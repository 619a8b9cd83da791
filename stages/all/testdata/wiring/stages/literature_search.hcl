stage "literature_search" "x" {
  queries    = stage.soundness_methods.x
  literature = model.corpus
  op         = "snippets"
  as_of      = "2026-12-01"
  limit      = 2
}
