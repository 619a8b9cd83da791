stage "llm_review" "x" {
  ideas = dataset.scholarideas
  model = model.gen_b
}
