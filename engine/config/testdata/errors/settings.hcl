settings {
  max_nodes = 0 # ERROR: Invalid max_nodes
}

dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "a" {
  input = dataset.targets
}
