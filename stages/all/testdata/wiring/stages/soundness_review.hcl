stage "soundness_review" "x" {
  synthesis = stage.soundness_synthesis.x
  methods   = stage.soundness_methods.x
  model     = model.gen_b
}
