# Quickstart: a small IdeaBench-shaped pipeline on the offline mock provider.
#
#   ideaflow run experiments/quickstart          # or: make run
#   ideaflow run experiments/quickstart -var n=5 # two more samples per target; the first 3 stay cached
#
# Every number this experiment produces is SYNTHETIC: the mock provider makes
# up well-formed answers. Point the models at a real provider (see README) to
# measure real models.

variable "n" {
  description = "ideas generated per target paper (independent samples)"
  default     = 3
}

provider "mock" {
  kind = "mock"
  seed = 7
}

model "generator_a" {
  provider    = provider.mock
  name        = "mock-generator-a"
  family      = "mock-a"
  temperature = 0.8
  max_tokens  = 400
}

model "generator_b" {
  provider    = provider.mock
  name        = "mock-generator-b"
  family      = "mock-b"
  temperature = 0.8
  max_tokens  = 400
}

model "judge" {
  provider    = provider.mock
  name        = "mock-judge"
  family      = "mock-judge"
  temperature = 0
  max_tokens  = 300
}

dataset "targets" {
  format = "ideabench"
  path   = "data/targets.jsonl"
}

quality "novelty" {
  definition = "developing new methodologies, techniques, or instruments that allow researchers to explore questions in ways that were not possible before"
}

# Low-resource scenario of the IdeaBench paper: at most 5 filtered references per target.
stage "filter_references" "low" {
  dataset        = dataset.targets
  min_citations  = 5
  require_intent = "background"
  limit          = 5
}

stage "generate_ideas" "main" {
  for_each   = { for m in [model.generator_a, model.generator_b] : m.name => m }
  model      = each.value
  references = stage.filter_references.low
  n          = var.n
  domain     = "materials, ecology and computing" # the system prompt's "You are a ... researcher."
  prompt     = file("prompts/generate.tmpl")
}

# Fans out over generate_ideas.main's instances: one ranking stage per generator.
stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.main
  judge   = model.judge
  quality = quality.novelty
}

stage "insight_score" "novelty" {
  ranks = stage.rank_ideas.novelty
}

report "table1" {
  title    = "Quickstart: Insight Score (novelty)"
  rows     = stage.generate_ideas.main
  columns  = [stage.insight_score.novelty]
  row_dims = ["model"]                               # the for_each key names the model of each row
  labels   = { model = "Model", "insight_score.novelty" = "Novelty" }
  better   = { "insight_score.novelty" = "higher" }  # the best value is printed bold
  formats  = ["markdown", "csv"]
}
