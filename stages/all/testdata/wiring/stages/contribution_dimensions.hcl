stage "contribution_dimensions" "x" {
  ideas                 = dataset.scholarideas
  model                 = model.gen_b
  max_statements        = 2
  queries_per_statement = 1
}
