provider "emb" {
  kind            = "embeddings"
  base_url        = "localhost:8080" # ERROR: Invalid base_url
  max_batch       = "big" # ERROR: Wrong type for max_batch
  max_concurrency = -1 # ERROR: Invalid max_concurrency
  max_reply_bytes = 1.5 # ERROR: Wrong type for max_reply_bytes
}

provider "tei" {
  kind      = "tei"
  base_url  = "http://localhost:8080"
  max_batch = 0 # ERROR: Invalid max_batch
  headers   = "x" # ERROR: Wrong type for headers
}
