# Position-bias audit of the IdeaBench judges (beyond the paper). The
# paper's code always lists the target paper's idea first, so a judge that
# prefers the first-listed idea moves every Insight Score. For each judge:
#
#   rotate        the target shown once at every position (n + 1 = 4
#                 rankings per target): the target's rank by the position
#                 it was shown at, and the share of rankings won by the
#                 idea shown first against the 1/(n+1) = 0.25 expected
#                 without bias (an exact one-sided binomial test; biased = 1
#                 below alpha = 0.05);
#   target_first  the paper's order, and shuffle (a seeded order): their
#                 Insight Scores side by side.
#
#   ideaflow run experiments/ideabench/position_bias.hcl            # offline, SYNTHETIC

variable "offline" {
  description = "answer every call with the mock provider; false: the gateway and tei endpoints below"
  default     = true
}
variable "dataset" {
  description = "the targets, ideabench JSONL with references"
  default     = "data/targets.jsonl"
}
variable "gateway_url" {
  description = "an OpenAI-compatible gateway serving the generator and the judge"
  default     = "http://localhost:8000/v1"
}

variable "gateway_rpm" {
  description = "the gateway's requests per minute (0: unlimited)"
  default     = 500
}
variable "gateway_tpm" {
  description = "the gateway's tokens per minute, estimated before and settled after each call (0: unlimited)"
  default     = 0
}
variable "gateway_max_concurrency" {
  description = "calls in flight at once on the gateway (lowered adaptively when many are answered 429)"
  default     = 32
}

provider "mock" {
  kind = "mock"
  seed = 1
}
provider "gateway" {
  kind                = "openai"
  base_url            = var.gateway_url
  api_key_env         = "GATEWAY_API_KEY"
  requests_per_minute = var.gateway_rpm
  tokens_per_minute   = var.gateway_tpm
  max_concurrency     = var.gateway_max_concurrency
}

model "gpt4o_mini" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o-mini"
  family      = "openai-gpt4"
  temperature = 0.7
  max_tokens  = 1024
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
}
model "judge_mini" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o-mini"
  family      = "openai-gpt4"
  temperature = 0
  max_tokens  = 512
}
model "judge" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4"
  temperature = 0
  max_tokens  = 512
}

dataset "targets" {
  format = "ideabench"
  path   = var.dataset
}

quality "novelty" {
  definition = "how new the idea is relative to what is known: a new hypothesis, mechanism, method or combination rather than a restatement of the background"
}
quality "feasibility" {
  definition = "how readily the idea can be tested with existing methods, data and resources in a reasonable time"
}

locals {
  judges = { for m in [model.judge, model.judge_mini] : m.name => m }
}

stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = 5
}

stage "generate_ideas" "ideas" {
  model      = model.gpt4o_mini
  references = stage.filter_references.low
  n          = 3
  mode       = "batch"
}

stage "rank_ideas" "rotate" {
  for_each     = local.judges
  ideas        = stage.generate_ideas.ideas
  judge        = each.value
  quality      = quality.novelty
  order        = "rotate"
  permutations = 4 # n + 1
}
stage "rank_ideas" "target_first" {
  for_each = local.judges
  ideas    = stage.generate_ideas.ideas
  judge    = each.value
  quality  = quality.novelty
  order    = "target_first"
}
stage "rank_ideas" "shuffle" {
  for_each = local.judges
  ideas    = stage.generate_ideas.ideas
  judge    = each.value
  quality  = quality.novelty
  order    = "shuffle"
  seed     = 1
}

stage "position_bias" "novelty" {
  for_each     = local.judges
  rotate       = stage.rank_ideas.rotate[each.key]
  target_first = stage.rank_ideas.target_first[each.key]
  shuffle      = stage.rank_ideas.shuffle[each.key]
}

stage "insight_score" "target_first" {
  ranks = stage.rank_ideas.target_first
}
stage "insight_score" "shuffle" {
  ranks = stage.rank_ideas.shuffle
}

report "position_bias" {
  title = "Position bias of the judges (novelty): first-position win share of rotated rankings; Insight Score by order"
  rows  = stage.position_bias.novelty
  columns = [
    stage.position_bias.novelty,
    stage.insight_score.target_first,
    stage.insight_score.shuffle,
  ]
  # The binomial test beside the share: its p-value and whether the judge
  # is flagged (1: biased), each a column.
  extra_columns = ["position_bias.novelty:p_value", "position_bias.novelty:biased"]
  labels = {
    "position_bias.novelty"         = "First-position win share"
    "position_bias.novelty:p_value" = "p-value"
    "position_bias.novelty:biased"  = "Biased"
    "insight_score.target_first"    = "Insight Score (target first)"
    "insight_score.shuffle"         = "Insight Score (shuffled)"
  }
  item_name = "targets"
  intervals = true
  formats   = ["markdown", "csv", "json", "latex"]
}
