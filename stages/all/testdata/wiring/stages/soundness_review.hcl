stage "soundness_review" "x" {
  synthesis = stage.soundness_synthesis.x
  model     = model.gen_b
}
