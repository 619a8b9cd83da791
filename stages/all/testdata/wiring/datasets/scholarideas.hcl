dataset "scholarideas" {
  format = "scholarideas"
  path   = "${var.repo}/experiments/scholareval/data/ideas"
  limit  = 1
}
