stage "preference_score" "x" {
  preferences = stage.pairwise_preference.x
}
