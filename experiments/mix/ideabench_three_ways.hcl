# One set of IdeaBench ideas judged three ways (issue 25):
#
#   IdeaBench targets -> the low-resource scenario's references -> one idea
#   per target from each of main.hcl's seven generators, then
#     - IdeaBench's ranking against the target paper (novelty),
#     - a LiveIdeaBench panel (originality, feasibility, clarity; no judge
#       of the generator's family),
#     - ScholarEval's soundness review (literature-grounded),
#   and cross_agreement: per idea, the idea's place against its target vs
#   its panel score vs its soundness score; per model, the three
#   leaderboards' rank correlation (Kendall tau-b, bootstrap intervals over
#   the targets).
#
# The generation blocks are main.hcl's (same models, references, prompt,
# mock seed), so a run of main.hcl has already paid for them: each sample
# is keyed by its request, not by n, and this file's n = 1 is main.hcl's
# sample 0 (ScholarEval reviews one idea a target). After main.hcl,
# `ideaflow plan experiments/mix/ideabench_three_ways.hcl` shows every
# generation cached: the mix costs only its judging.
#
#   ideaflow run experiments/ideabench/main.hcl
#   ideaflow plan experiments/mix/ideabench_three_ways.hcl
#   ideaflow run experiments/mix/ideabench_three_ways.hcl
#   ideaflow show stage.cross_agreement.three_ways experiments/mix/ideabench_three_ways.hcl
#
# Offline (the default) every answer is the mock's: every number is
# SYNTHETIC, and the agreement measures the mock, not the benchmarks.

variable "offline" {
  description = "answer every call with the mock provider and ScholarEval's sample corpus; false: the gateway and Semantic Scholar"
  default     = true
}

variable "dataset" {
  description = "the targets, ideabench JSONL with references (main.hcl's)"
  default     = "../ideabench/data/targets.jsonl"
}

variable "corpus" {
  description = "the papers the offline literature source indexes"
  default     = "../scholareval/data/corpus.jsonl"
}

variable "gateway_url" {
  description = "an OpenAI-compatible gateway serving the generators, the judges and the reviewer"
  default     = "http://localhost:8000/v1"
}

variable "gateway_rpm" {
  description = "the gateway's requests per minute (0: unlimited)"
  default     = 500
}

variable "seed" {
  description = "main.hcl's seed of the 5 filtered references drawn per target (keep it equal to share its generations)"
  default     = 0
}

variable "panel_seed" {
  description = "the seed of the panel's judge draws"
  default     = 1
}

variable "resamples" {
  description = "bootstrap resamples of the targets for every interval"
  default     = 1000
}

provider "mock" {
  kind = "mock"
  seed = 1 # main.hcl's: the mock's answers are keyed by its seed
}

provider "gateway" {
  kind                = "openai"
  base_url            = var.gateway_url
  api_key_env         = "GATEWAY_API_KEY"
  requests_per_minute = var.gateway_rpm
  max_concurrency     = 32
}

provider "papers" {
  kind = "corpus"
  path = var.corpus
}

provider "s2" {
  kind        = "semantic_scholar"
  api_key_env = "S2_API_KEY"
}

# ---- the generators: main.hcl's seven, as main.hcl declares them

model "llama_70b" {
  provider         = var.offline ? provider.mock : provider.gateway
  name             = "meta-llama/llama-3.1-70b-instruct"
  family           = "llama-3.1"
  knowledge_cutoff = "2024-01-01"
}

model "llama_405b" {
  provider         = var.offline ? provider.mock : provider.gateway
  name             = "meta-llama/llama-3.1-405b-instruct"
  family           = "llama-3.1"
  knowledge_cutoff = "2024-01-01"
}

model "gemini_flash" {
  provider         = var.offline ? provider.mock : provider.gateway
  name             = "google/gemini-flash-1.5"
  family           = "gemini-1.5"
  temperature      = 0.7
  knowledge_cutoff = "2024-01-01"
}

model "gemini_pro" {
  provider         = var.offline ? provider.mock : provider.gateway
  name             = "google/gemini-pro-1.5"
  family           = "gemini-1.5"
  temperature      = 0.7
  knowledge_cutoff = "2024-01-01"
}

model "gpt35" {
  provider         = var.offline ? provider.mock : provider.gateway
  name             = "openai/gpt-3.5-turbo"
  family           = "openai-gpt3.5"
  temperature      = 0.7
  knowledge_cutoff = "2024-01-01"
}

model "gpt4o_mini" {
  provider         = var.offline ? provider.mock : provider.gateway
  name             = "openai/gpt-4o-mini"
  family           = "openai-gpt4"
  temperature      = 0.7
  knowledge_cutoff = "2024-01-01"
}

model "gpt4o" {
  provider         = var.offline ? provider.mock : provider.gateway
  name             = "openai/gpt-4o"
  family           = "openai-gpt4"
  temperature      = 0.7
  knowledge_cutoff = "2024-01-01"
}

# ---- the evaluators' models

model "ranking_judge" { # IdeaBench's judge, as main.hcl's
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4"
  temperature = 0.7
}

# The panel: no family of any generator, so every idea can draw 3 of 4.
model "claude" {
  provider = var.offline ? provider.mock : provider.gateway
  name     = "anthropic/claude-3.5-sonnet"
  family   = "claude-3.5"
}

model "qwen" {
  provider = var.offline ? provider.mock : provider.gateway
  name     = "qwen/qwen-2.5-72b-instruct"
  family   = "qwen-2.5"
}

model "deepseek" {
  provider = var.offline ? provider.mock : provider.gateway
  name     = "deepseek/deepseek-chat"
  family   = "deepseek"
}

model "mistral" {
  provider = var.offline ? provider.mock : provider.gateway
  name     = "mistralai/mistral-large"
  family   = "mistral"
}

model "reviewer" { # ScholarEval's
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4.1"
  family      = "openai-gpt4"
  temperature = 0
}

model "literature" {
  provider = var.offline ? provider.papers : provider.s2
  name     = "semantic-scholar"
}

dataset "targets" {
  format = "ideabench"
  path   = var.dataset
}

quality "novelty" {
  definition = "how new the idea is relative to what is known: a new hypothesis, mechanism, method or combination rather than a restatement of the background"
}

locals {
  generators = [model.llama_70b, model.llama_405b, model.gemini_flash, model.gemini_pro, model.gpt35, model.gpt4o_mini, model.gpt4o]
}

# ---- generation: main.hcl's low-resource scenario, sample 0

stage "filter_references" "low" {
  dataset         = dataset.targets
  mode            = "filtered"
  limit           = 5
  pick            = "random"
  seed            = var.seed
  min_filtered    = 0
  published_after = ""
}

stage "generate_ideas" "mix" {
  for_each     = { for m in local.generators : m.name => m }
  model        = each.value
  references   = stage.filter_references.low
  n            = 1
  mode         = "independent"
  prompt_style = "authors"
}

# ---- judged three ways (each fans out over the generators)

stage "rank_ideas" "novelty" {
  ideas        = stage.generate_ideas.mix
  judge        = model.ranking_judge
  quality      = quality.novelty
  prompt_style = "authors"
  order        = "rotate" # the target at every position: a graded place, free of the first position's bias
  permutations = 2        # n + 1 positions
}

stage "judge_panel" "panel" {
  ideas           = stage.generate_ideas.mix
  panel           = [model.claude, model.qwen, model.deepseek, model.mistral]
  judges_per_idea = 3
  seed            = var.panel_seed
}

stage "soundness_methods" "se" {
  ideas       = stage.generate_ideas.mix
  model       = model.reviewer
  max_methods = 3
}

stage "literature_search" "snippets" {
  queries    = stage.soundness_methods.se
  literature = model.literature
  op         = "snippets"
  as_of      = "2026-12-01"
  limit      = 5
  use_cutoff = false # IdeaBench targets carry a year, not ScholarEval's cutoff
}

stage "soundness_evidence" "se" {
  methods = stage.soundness_methods.se
  search  = stage.literature_search.snippets
  model   = model.reviewer
}

stage "soundness_synthesis" "se" {
  methods  = stage.soundness_methods.se
  evidence = stage.soundness_evidence.se
  model    = model.reviewer
}

stage "soundness_review" "se" {
  synthesis = stage.soundness_synthesis.se
  methods   = stage.soundness_methods.se
  model     = model.reviewer
}

stage "cross_agreement" "three_ways" {
  rankings  = [stage.rank_ideas.novelty]
  panels    = [stage.judge_panel.panel]
  reviews   = [stage.soundness_review.se]
  resamples = var.resamples
}
