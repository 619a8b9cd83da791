dataset "bare" {
  format = "ideabench-targets-csv"
  path   = "targets.csv"
}

dataset "joined" {
  format         = "ideabench-targets-csv"
  path           = "targets.csv"
  references     = "refs.csv"
  min_references = 2
  sample         = 1
  sample_seed    = 4
}

stage "filter_references" "bare" {
  dataset = dataset.bare
}

stage "filter_references" "joined" {
  dataset        = dataset.joined
  min_references = 1
}
