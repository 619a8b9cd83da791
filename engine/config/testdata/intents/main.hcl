dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}

stage "checked" "typo" {
  input  = dataset.targets
  intent = "backgorund"
}

stage "checked" "default" {
  input = dataset.targets
}

stage "checked" "fine" {
  input  = dataset.targets
  intent = "result"
}
