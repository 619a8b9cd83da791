stage "similarity" "x" {
  ideas = stage.generate_ideas.x
}
