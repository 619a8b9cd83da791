provider "mock" {
  kind = "mock"
}

model "a" {
  provider = provider.mock
  name     = "a" "b" # ERROR: Missing newline after argument
}
