dataset "ideabench_targets_csv" {
  format     = "ideabench-targets-csv"
  path       = "${var.data}/targets.csv"
  references = "${var.data}/references.csv"
}
