provider "mock" {
  kind = "mock"
}

model "hot" {
  provider    = provider.mock
  name        = "hot"
  temperature = 2.5 # ERROR: Invalid temperature
  top_p       = 1.1 # ERROR: Invalid top_p
  max_tokens  = -1 # ERROR: Invalid max_tokens
}

model "cold" {
  provider    = provider.mock
  name        = "cold"
  temperature = -0.1 # ERROR: Invalid temperature
  top_p       = -1 # ERROR: Invalid top_p
}

model "ok" {
  provider    = provider.mock
  name        = "ok"
  temperature = 2
  top_p       = 0
  max_tokens  = 0
}
