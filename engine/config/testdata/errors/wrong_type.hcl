provider "mock" {
  kind = "mock"
}

model "a" {
  provider    = provider.mock
  name        = "a"
  temperature = "hot" # ERROR: Wrong type for temperature
}

dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "a" {
  input = dataset.targets
  n     = 2.5 # ERROR: Wrong type for n
  tags  = "one" # ERROR: Wrong type for tags
  model = dataset.targets # ERROR: Wrong type for model
}
