dataset "keywords" {
  format     = "keywords"
  path       = "${var.data}/keywords.txt"
  categories = "${var.data}/categories.csv"
}
