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

settings {
  max_nodes = 5
}

settings { # ERROR: Duplicate settings block
  max_nodes = 6
}
