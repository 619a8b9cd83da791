stage "best_idea" "x" {
  ideas      = stage.generate_ideas.x
  similarity = stage.similarity.x
}
