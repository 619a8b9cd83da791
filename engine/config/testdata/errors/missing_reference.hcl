provider "mock" {
  kind = "mock"
}

model "a" {
  provider = provider.mock
  name     = "a"
}

dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "a" {
  input = dataset.papers # ERROR: Reference to undeclared dataset
  model = model.gpt5 # ERROR: Reference to undeclared model
  n     = var.count # ERROR: Reference to undeclared variable
}

stage "echo" "b" {
  input = stage.echo.nope # ERROR: Reference to undeclared stage
  tags  = [each.key] # ERROR: Reference to each outside for_each
}
