dataset "jsonl" {
  format = "jsonl"
  path   = "${var.data}/ideas.jsonl"
}
