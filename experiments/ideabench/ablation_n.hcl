# IdeaBench Figure 6 (Guo et al.): the target paper's average absolute rank
# (1 = ranked above every generated idea) as the number of generated ideas n
# grows, for novelty and feasibility, with filtered and unfiltered (every)
# references, GPT-4o Mini on the targets with at least 15 references.
#
# Ideas are independent samples (one request each), so the n = 10 arm
# reuses the n = 5 arm's five ideas, which reuse the n = 3 arm's: the
# generator is asked max(n) times per target and arm, not sum(n). Each n is
# ranked on its own (the judge sees n + 1 ideas).
#
#   ideaflow run experiments/ideabench/ablation_n.hcl               # offline, SYNTHETIC

variable "offline" {
  description = "answer every call with the mock provider; false: the gateway and tei endpoints below"
  default     = true
}
variable "dataset" {
  description = "the targets, ideabench JSONL with references"
  default     = "data/targets.jsonl"
}
variable "n_choices" {
  description = "send a target's independent samples as one request with n choices, so the gateway bills the references once (an operational setting: keys and results are unchanged)"
  default     = false
}
variable "gateway_url" {
  description = "an OpenAI-compatible gateway serving the generator and the judge"
  default     = "http://localhost:8000/v1"
}

provider "mock" {
  kind = "mock"
  seed = 1
}
provider "gateway" {
  kind                = "openai"
  base_url            = var.gateway_url
  api_key_env         = "GATEWAY_API_KEY"
  requests_per_minute = 500
  max_concurrency     = 32
  n_choices           = var.n_choices
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
model "judge" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4"
  temperature = 0
  max_tokens  = 512
}

# The ablation's targets: at least 15 references each (before filtering).
dataset "targets" {
  format         = "ideabench"
  path           = var.dataset
  min_references = 15
}

quality "novelty" {
  definition = "how new the idea is relative to what is known: a new hypothesis, mechanism, method or combination rather than a restatement of the background"
}
quality "feasibility" {
  definition = "how readily the idea can be tested with existing methods, data and resources in a reasonable time"
}

variable "ns" {
  description = "the numbers of generated ideas to compare"
  default     = [1, 3, 5, 10]
}

locals {
  references = {
    filtered   = { mode = "filtered" }
    unfiltered = { mode = "all" }
  }
  arms = { for p in setproduct(var.ns, keys(local.references)) : format("%02d %s", p[0], p[1]) => { n = p[0], references = p[1] } }
}

stage "filter_references" "refs" {
  for_each       = local.references
  dataset        = dataset.targets
  mode           = each.value.mode
  min_references = 1
}

stage "generate_ideas" "n" {
  for_each   = local.arms
  model      = model.gpt4o_mini
  references = stage.filter_references.refs[each.value.references]
  n          = each.value.n
  mode       = "independent" # sample i is one node: a larger n reuses a smaller n's ideas
}

stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.n
  judge   = model.judge
  quality = quality.novelty
}
stage "rank_ideas" "feasibility" {
  ideas   = stage.generate_ideas.n
  judge   = model.judge
  quality = quality.feasibility
}

# The Score's value is the target's average absolute rank; the Insight
# Score is beside it in the score's extra values.
stage "insight_score" "novelty_average_absolute_rank" {
  ranks   = stage.rank_ideas.novelty
  summary = "mean_rank"
}
stage "insight_score" "feasibility_average_absolute_rank" {
  ranks   = stage.rank_ideas.feasibility
  summary = "mean_rank"
}

report "figure6" {
  title = "IdeaBench Figure 6: the target paper's average absolute rank by n (GPT-4o Mini)"
  rows  = stage.generate_ideas.n
  columns = [
    stage.insight_score.novelty_average_absolute_rank,
    stage.insight_score.feasibility_average_absolute_rank,
  ]
  formats = ["markdown", "csv"]
}

# Figure 6 as a figure: n on x, a line each for filtered and unfiltered
# references. Keys are "NN REFERENCES".
stage "plot" "figure6_novelty" {
  kind      = "line"
  data      = [stage.insight_score.novelty_average_absolute_rank]
  x         = "key[0]"
  series    = "key[1]"
  separator = " "
  title     = "Figure 6: target's average absolute rank by n (novelty)"
  x_label   = "n (ideas per target)"
  y_label   = "target's average rank"
}
stage "plot" "figure6_feasibility" {
  kind      = "line"
  data      = [stage.insight_score.feasibility_average_absolute_rank]
  x         = "key[0]"
  series    = "key[1]"
  separator = " "
  title     = "Figure 6: target's average absolute rank by n (feasibility)"
  x_label   = "n (ideas per target)"
  y_label   = "target's average rank"
}
