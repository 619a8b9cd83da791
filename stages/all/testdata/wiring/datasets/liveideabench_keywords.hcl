dataset "liveideabench_keywords" {
  format = "liveideabench-keywords"
  path   = "${var.data}/kws.csv"
}
