# The contribution side's paper search (the x instance searches snippets
# for methods).
stage "literature_search" "papers" {
  queries    = stage.contribution_dimensions.x
  literature = model.corpus
  op         = "search"
  as_of      = "2026-12-01"
  limit      = 3
}
