# IdeaBench Table 1 (Guo et al.): seven generators x two resource scenarios,
# n = 3 ideas in one request, semantic similarity (80th percentile BERTScore
# F1), idea overlap (80th percentile 0-10 rating of the most similar idea),
# novelty and feasibility Insight Scores, with the practical upper limit of
# similarity (each target's abstract against its own summarised idea) as a
# column beside them.
#
#   ideaflow plan experiments/ideabench/main.hcl                 # offline: the mock provider
#   ideaflow run  experiments/ideabench/main.hcl -var offline=false \
#       -var dataset=/path/to/targets.jsonl                     # real models behind a gateway
#
# The project ships no IdeaBench data: data/targets.jsonl is a tiny
# self-written sample (4 targets) in the ideabench JSONL format. Real
# targets with their references come from experiments/ideabench/build_dataset.hcl
# (Semantic Scholar) or any JSONL of the same shape.
#
# With offline = true (the default) every number is SYNTHETIC.

variable "offline" {
  description = "answer every call with the mock provider; false: the gateway and tei endpoints below"
  default     = true
}
variable "dataset" {
  description = "the targets, ideabench JSONL with references"
  default     = "data/targets.jsonl"
}
variable "gateway_url" {
  description = "an OpenAI-compatible gateway serving all seven generators and the judge"
  default     = "http://localhost:8000/v1"
}
variable "tei_url" {
  description = "a text-embeddings-inference server for BERTScore token embeddings"
  default     = "http://localhost:8080"
}
variable "published_after" {
  description = "YYYY-MM-DD: drop (and count) targets that may be published before it; \"2024-01-01\", the generators' knowledge cutoff, is the paper's safeguard. \"\": keep all, and plan warns"
  type        = string
  default     = ""
}
variable "similarity" {
  description = "\"bertscore\" (the paper: BERTScore F1 from token embeddings) or \"rouge_l\" (offline, lexical, no embedding service)"
  default     = "bertscore"
}
variable "n" {
  description = "ideas per target, asked for in one request (the paper: 3)"
  default     = 3
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
}
provider "tei" {
  kind     = "tei"
  base_url = var.tei_url
}

# The paper's seven generators (its Table 1), named as an OpenRouter-style
# gateway spells them. All were trained on data before 2024-01-01, which is
# why the paper's targets are published after it.
locals {
  generators = {
    "meta-llama/llama-3.1-70b-instruct"  = "llama-3.1"
    "meta-llama/llama-3.1-405b-instruct" = "llama-3.1"
    "google/gemini-flash-1.5"            = "gemini-1.5"
    "google/gemini-pro-1.5"              = "gemini-1.5"
    "openai/gpt-3.5-turbo"               = "openai-gpt3.5"
    "openai/gpt-4o-mini"                 = "openai-gpt4"
    "openai/gpt-4o"                      = "openai-gpt4"
  }
  # low resource: 5 filtered references; high resource: every reference.
  scenarios = {
    low  = { mode = "filtered", limit = 5 }
    high = { mode = "all", limit = 0 }
  }
  cells = { for p in setproduct(keys(local.generators), keys(local.scenarios)) : "${p[0]} ${p[1]}" => { model = p[0], scenario = p[1] } }
}

model "llama_70b" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "meta-llama/llama-3.1-70b-instruct"
  family      = "llama-3.1"
  temperature = 0.7
  max_tokens  = 1024
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
}
model "llama_405b" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "meta-llama/llama-3.1-405b-instruct"
  family      = "llama-3.1"
  temperature = 0.7
  max_tokens  = 1024
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
}
model "gemini_flash" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "google/gemini-flash-1.5"
  family      = "gemini-1.5"
  temperature = 0.7
  max_tokens  = 1024
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
}
model "gemini_pro" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "google/gemini-pro-1.5"
  family      = "gemini-1.5"
  temperature = 0.7
  max_tokens  = 1024
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
}
model "gpt35" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-3.5-turbo"
  family      = "openai-gpt3.5"
  temperature = 0.7
  max_tokens  = 1024
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
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
model "gpt4o" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4"
  temperature = 0.7
  max_tokens  = 1024
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
}

# The paper's judge for ranking and overlap: GPT-4o, at temperature 0.
model "judge" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4"
  temperature = 0
  max_tokens  = 512
}

model "bert" {
  provider = var.offline ? provider.mock : provider.tei
  name     = "roberta-large"
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

stage "filter_references" "scenario" {
  for_each        = local.scenarios
  dataset         = dataset.targets
  mode            = each.value.mode
  limit           = each.value.limit
  published_after = var.published_after
}

stage "generate_ideas" "table1" {
  for_each   = local.cells
  model      = [for m in [model.llama_70b, model.llama_405b, model.gemini_flash, model.gemini_pro, model.gpt35, model.gpt4o_mini, model.gpt4o] : m if m.name == each.value.model][0]
  references = stage.filter_references.scenario[each.value.scenario]
  n          = var.n
  mode       = "batch"
}

stage "similarity" "bertscore" {
  ideas  = stage.generate_ideas.table1
  method = var.similarity
  model  = model.bert
}

stage "similarity_score" "semantic_similarity" {
  similarity = stage.similarity.bertscore
  summary    = "p80"
}

# The practical upper limit: each target's abstract against its own idea.
# It depends on the targets alone, so one instance serves every row.
stage "similarity" "upper_limit" {
  ideas       = stage.generate_ideas.table1["openai/gpt-4o high"]
  method      = var.similarity
  model       = model.bert
  upper_limit = true
}

stage "similarity_score" "upper_limit" {
  similarity = stage.similarity.upper_limit
  summary    = "p80"
}

stage "best_idea" "most_similar" {
  ideas      = stage.generate_ideas.table1
  similarity = stage.similarity.bertscore
}

stage "overlap_rating" "overlap" {
  ideas      = stage.generate_ideas.table1
  judge      = model.judge
  similarity = stage.best_idea.most_similar
}

stage "overlap_score" "idea_overlap" {
  ratings = stage.overlap_rating.overlap
  summary = "p80"
}

stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.table1
  judge   = model.judge
  quality = quality.novelty
}
stage "rank_ideas" "feasibility" {
  ideas   = stage.generate_ideas.table1
  judge   = model.judge
  quality = quality.feasibility
}

stage "insight_score" "novelty_insight_score" {
  ranks = stage.rank_ideas.novelty
}
stage "insight_score" "feasibility_insight_score" {
  ranks = stage.rank_ideas.feasibility
}

report "table1" {
  title   = "IdeaBench Table 1: semantic similarity (p80 BERTScore F1), idea overlap (p80), Insight Scores"
  rows    = stage.generate_ideas.table1
  columns = [
    stage.similarity_score.semantic_similarity,
    stage.overlap_score.idea_overlap,
    stage.insight_score.novelty_insight_score,
    stage.insight_score.feasibility_insight_score,
    stage.similarity_score.upper_limit,
  ]
  # Keys are "MODEL SCENARIO": model names hold slashes, so split on the space.
  row_dims      = ["model", "scenario"]
  key_separator = " "
  # The paper's order (an object's keys would come sorted).
  row_order = [
    "meta-llama/llama-3.1-70b-instruct", "meta-llama/llama-3.1-405b-instruct",
    "google/gemini-flash-1.5", "google/gemini-pro-1.5",
    "openai/gpt-3.5-turbo", "openai/gpt-4o-mini", "openai/gpt-4o",
    "low", "high",
  ]
  labels = {
    model                                        = "Model"
    scenario                                     = "Resource"
    low                                          = "Low"
    high                                         = "High"
    "similarity_score.semantic_similarity"       = "Semantic Similarity"
    "overlap_score.idea_overlap"                 = "Idea Overlap"
    "insight_score.novelty_insight_score"        = "Novelty Insight Score"
    "insight_score.feasibility_insight_score"    = "Feasibility Insight Score"
    "similarity_score.upper_limit"               = "Upper Limit (abstract vs its idea)"
  }
  better = {
    "similarity_score.semantic_similarity"    = "higher"
    "overlap_score.idea_overlap"              = "higher"
    "insight_score.novelty_insight_score"     = "higher"
    "insight_score.feasibility_insight_score" = "higher"
  }
  formats = ["markdown", "csv", "latex"]
}
