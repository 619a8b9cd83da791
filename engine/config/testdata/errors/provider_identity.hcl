provider "gw" {
  kind              = "openai"
  api_key_env       = "GW_KEY"
  endpoint_identity = "   " # ERROR: Invalid endpoint_identity
}
