dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "a" {
  input  = dataset.targets
  prompt = file("prompts/broken.tmpl")
}
