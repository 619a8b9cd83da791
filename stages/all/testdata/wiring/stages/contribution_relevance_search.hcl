# The first relevance pass, over the search's papers: the seeds of
# paper_augment (the x instance is the second pass, over the papers
# embedding_filter kept).
stage "contribution_relevance" "search" {
  dimensions = stage.contribution_dimensions.x
  search     = stage.literature_search.papers
  model      = model.gen_b
}
