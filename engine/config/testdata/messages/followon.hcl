dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "gen" {
  for_each = 3
  input    = dataset.targets
}

stage "echo" "judge" {
  input = stage.echo.gen
}

report "table" {
  rows = [stage.echo.judge]
}
