dataset "ideabench" {
  format = "ideabench"
  path   = "${var.repo}/experiments/quickstart/data/targets.jsonl"
  limit  = 2 # qs-membrane has an idea, qs-reef none
}
