variable "n" {
  default = 3
  type    = number
}

variable "temperatures" {
  default = [0.2, 0.7]
}

locals {
  models = [model.alpha, model.beta]
  topic  = "graphs"
}

provider "mock" {
  kind = "mock"
}

model "alpha" {
  provider    = provider.mock
  name        = "model-alpha"
  temperature = 0.7
  price {
    input_per_mtok  = 1
    output_per_mtok = 2
  }
}

model "beta" {
  provider = provider.mock
  name     = "model-beta"
}

dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}

quality "novelty" {
  definition = "new methods"
}

stage "echo" "gen" {
  for_each = { for m in local.models : trimspace(replace(m.name, "model-", "")) => m }
  input    = dataset.targets
  model    = each.value
  n        = var.n
  prompt   = templatefile("prompts/gen.tmpl", { topic = title(local.topic) })
}

stage "echo" "judge" {
  input   = stage.echo.gen
  quality = quality.novelty
}

stage "echo" "grid" {
  for_each = { for p in setproduct(["alpha", "beta"], var.temperatures) : format("%s/%s", p[0], p[1]) => p }
  input    = stage.echo.gen[each.value[0]]
  tags     = [each.value[0], tostring(each.value[1]), format("a-%s", tostring(each.value[1]))]
}

report "table" {
  rows    = stage.echo.gen
  columns = concat([stage.echo.judge], [])
}
