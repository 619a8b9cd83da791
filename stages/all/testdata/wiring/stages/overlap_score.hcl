stage "overlap_score" "x" {
  ratings = stage.overlap_rating.x
}
