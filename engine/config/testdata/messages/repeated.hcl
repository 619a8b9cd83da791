dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "gen" {
  for_each = toset(["a", "b", "c"])
  input    = dataset.targets
  tags     = "one"
}
