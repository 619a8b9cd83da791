stage "soundness_methods" "x" {
  ideas       = dataset.scholarideas
  model       = model.gen_b
  max_methods = 2
}
