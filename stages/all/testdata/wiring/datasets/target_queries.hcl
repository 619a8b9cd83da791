dataset "target_queries" {
  format = "jsonl"
  path   = "${var.data}/target_queries.jsonl"
}
