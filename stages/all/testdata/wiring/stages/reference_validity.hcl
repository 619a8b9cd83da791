stage "reference_validity" "x" {
  resolved = stage.resolve_references.x
}
