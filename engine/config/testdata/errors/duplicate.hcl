provider "mock" {
  kind = "mock"
}

model "a" {
  provider = provider.mock
  name     = "a"
}

model "a" { # ERROR: Duplicate model
  provider = provider.mock
  name     = "b"
}
