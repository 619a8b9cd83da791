stage "write_ideabench_dataset" "x" {
  targets    = stage.find_targets.x
  references = stage.fetch_references.x
}
