stage "fetch_references" "x" {
  targets       = stage.find_targets.x
  literature    = model.mocklit
  as_of         = "2026-12-01"
  max_per_query = 5
}
