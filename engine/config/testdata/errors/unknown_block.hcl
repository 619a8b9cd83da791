provider "mock" {
  kind = "mock"
}

experiment "x" { # ERROR: Unsupported block type
}

stage "no_such_type" "x" { # ERROR: Unknown stage type
}
