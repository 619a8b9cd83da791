dataset "targets" {
  format = "ideabench"
  path   = "no/such/targets.jsonl" # ERROR: Dataset file not found
}

stage "echo" "a" {
  input  = dataset.targets
  prompt = file("prompts/missing.tmpl") # ERROR: Error in function call
}
