stage "similarity_score" "x" {
  similarity = stage.similarity.x
}
