dataset "targets" {
  format      = "ideabench-targets-csv"
  path        = "targets.csv"
  sample_seed = 3
}

stage "echo" "a" {
  input = dataset.targets
}
