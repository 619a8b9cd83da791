stage "soundness_synthesis" "x" {
  methods  = stage.soundness_methods.x
  evidence = stage.soundness_evidence.x
  model    = model.gen_b
}
