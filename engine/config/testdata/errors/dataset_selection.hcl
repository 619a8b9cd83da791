dataset "generic" {
  format         = "csv"
  path           = "../targets.jsonl"
  references     = "refs.csv"  # ERROR: references needs format ideabench-targets-csv
  min_references = 3           # ERROR: min_references needs an IdeaBench format
}

dataset "bounds" {
  format         = "ideabench-targets-csv"
  path           = "../targets.jsonl"
  references     = "refs.tsv"  # ERROR: Unknown references file type
  min_references = -1          # ERROR: Invalid min_references
  sample         = 2.5         # ERROR: Wrong type for sample
  sample_seed    = -3          # ERROR: Invalid sample_seed
}

dataset "missing" {
  format     = "ideabench-targets-csv"
  path       = "../targets.jsonl"
  references = "no/such/refs.csv" # ERROR: References file not found
}

stage "echo" "a" {
  input = dataset.missing
}
