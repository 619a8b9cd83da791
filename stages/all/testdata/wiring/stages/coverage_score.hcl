stage "coverage_score" "x" {
  coverage = stage.coverage.x
}
