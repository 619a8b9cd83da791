stage "find_targets" "x" {
  queries    = dataset.target_queries
  literature = model.mocklit
  as_of      = "2026-12-01"
  limit      = 2
}
