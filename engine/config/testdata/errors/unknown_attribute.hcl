provider "mock" {
  kind  = "mock"
  speed = 3 # ERROR: Unsupported argument
}

dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "a" {
  input       = dataset.targets
  temperature = 0.2 # ERROR: Unsupported argument
}
