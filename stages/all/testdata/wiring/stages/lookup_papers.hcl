stage "lookup_papers" "x" {
  ids        = dataset.ideabench_targets_csv
  literature = model.mocklit
  as_of      = "2026-12-01"
}
