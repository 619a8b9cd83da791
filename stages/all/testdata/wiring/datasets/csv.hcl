dataset "csv" {
  format = "csv"
  path   = "${var.data}/topics.csv"
}
