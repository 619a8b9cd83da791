stage "overlap_rating" "x" {
  ideas      = stage.generate_ideas.x
  judge      = model.judge_a
  similarity = stage.best_idea.x
}
