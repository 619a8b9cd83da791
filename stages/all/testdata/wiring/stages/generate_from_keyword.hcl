stage "generate_from_keyword" "x" {
  keywords          = dataset.keywords
  model             = model.gen_a
  ideas_per_keyword = 2
}
