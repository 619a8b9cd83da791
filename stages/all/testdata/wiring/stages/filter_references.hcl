stage "filter_references" "x" {
  dataset = dataset.ideabench
}
