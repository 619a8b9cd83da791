provider "mock" { # ERROR: Missing required argument
}

stage "echo" "a" { # ERROR: Missing required argument
  n = 2
}
