dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "a" {
  input = stage.echo.c
}

stage "echo" "b" {
  input = stage.echo.a # ERROR: Dependency cycle
}

stage "echo" "c" {
  input = stage.echo.b
}
