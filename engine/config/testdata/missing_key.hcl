provider "remote" {
  kind        = "openai"
  base_url    = "http://127.0.0.1:1/v1"
  api_key_env = "IDEAFLOW_TEST_UNSET_KEY"
}

dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}

stage "echo" "a" {
  input = dataset.targets
}
