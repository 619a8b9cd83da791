provider "tei" { # ERROR: Missing base_url
  kind    = "tei"
  org_env = "ORG" # ERROR: Unsupported argument
}

provider "other" {
  kind = "anthropic" # ERROR: Unknown provider kind "anthropic"
}

provider "chat" { # ERROR: Missing api_key_env
  kind  = "openai"
  speed = 3 # ERROR: Unsupported argument
}

provider "mock" {
  kind      = "mock"
  max_batch = 4 # ERROR: Unsupported argument
}
