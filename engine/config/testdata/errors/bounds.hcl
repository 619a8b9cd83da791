dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
  limit  = -1 # ERROR: Invalid limit
}

stage "echo" "huge" {
  input = dataset.targets
  n     = 1e19 # ERROR: Invalid n
}

stage "echo" "zero" {
  input = dataset.targets
  n     = 0 # ERROR: Invalid n
}

stage "echo" "edge" {
  input = dataset.targets
  n     = 100
}
