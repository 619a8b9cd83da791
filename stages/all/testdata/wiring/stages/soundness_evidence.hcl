stage "soundness_evidence" "x" {
  methods = stage.soundness_methods.x
  search  = stage.literature_search.x
  model   = model.gen_b
}
