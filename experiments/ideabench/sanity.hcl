# Sanity baselines (beyond the paper): controls whose right answer is known
# before any model is asked, run through the same metrics as Table 1.
#
#   shuffled_words  the target idea's words in a seeded random order
#   copy_reference  a reference abstract, copied
#   target_oracle   the target idea itself
#
# A metric that works ranks them shuffled_words < copy_reference <
# target_oracle on similarity and overlap, and a judge without position bias
# ranks the oracle's copies level with the target (Insight Score 0.5).
# sanity_check flags each metric or judge that fails (value 0, failed = 1).
# Real generators are Table 1's (main.hcl): they must never get target, so
# they are not in this file's generate_ideas.
#
# The controls come from provider kind "baseline", which makes no network
# call; its answers are exact and reproducible, not SYNTHETIC. With offline =
# true the judge and the embeddings are the mock, whose
# context-free token vectors give shuffled words the oracle's BERTScore: the
# check is expected to flag the mock's BERTScore, and ROUGE-L, which sees
# word order, to pass.
#
#   ideaflow run experiments/ideabench/sanity.hcl

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
provider "tei" {
  kind     = "tei"
  base_url = var.tei_url
}

provider "baseline" {
  kind = "baseline"
  seed = 1 # the word shuffles
}

model "shuffled_words" {
  provider = provider.baseline
  name     = "shuffled_words"
}
model "copy_reference" {
  provider = provider.baseline
  name     = "copy_reference"
}
model "target_oracle" {
  provider = provider.baseline
  name     = "target_oracle"
}
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

stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = 5
}

# The target idea: the dataset's, else extracted (the paper's Fig. 5 prompt).
stage "extract_idea" "target" {
  targets = stage.filter_references.low
  model   = model.judge
}

locals {
  controls = { for m in [model.shuffled_words, model.copy_reference, model.target_oracle] : m.name => m }
}

# The controls see the target idea (target = ...), which a real generator
# must never be given.
stage "generate_ideas" "gen" {
  for_each   = local.controls
  model      = each.value
  references = stage.filter_references.low
  target     = stage.extract_idea.target
  n          = 3
  mode       = "batch"
}

stage "similarity" "rouge" {
  ideas = stage.generate_ideas.gen
}
stage "similarity" "bertscore" {
  ideas       = stage.generate_ideas.gen
  method      = "bertscore"
  model       = model.bert
  final_layer = true # what the tei provider serves (bert_score's layer 17 needs a transformers provider)
}
stage "similarity_score" "rouge_l" {
  similarity = stage.similarity.rouge
}
stage "similarity_score" "bertscore" {
  similarity = stage.similarity.bertscore
}
stage "best_idea" "most_similar" {
  ideas      = stage.generate_ideas.gen
  similarity = stage.similarity.bertscore
}
stage "overlap_rating" "overlap" {
  ideas      = stage.generate_ideas.gen
  judge      = model.judge
  similarity = stage.best_idea.most_similar
}
stage "overlap_score" "idea_overlap" {
  ratings = stage.overlap_rating.overlap
}
stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.gen
  judge   = model.judge
  quality = quality.novelty
  target  = stage.extract_idea.target
}
stage "insight_score" "novelty" {
  ranks = stage.rank_ideas.novelty
}

stage "sanity_check" "rouge_l" {
  shuffled_words = stage.similarity_score.rouge_l["shuffled_words"]
  copy_reference = stage.similarity_score.rouge_l["copy_reference"]
  target_oracle  = stage.similarity_score.rouge_l["target_oracle"]
}
stage "sanity_check" "bertscore" {
  shuffled_words = stage.similarity_score.bertscore["shuffled_words"]
  copy_reference = stage.similarity_score.bertscore["copy_reference"]
  target_oracle  = stage.similarity_score.bertscore["target_oracle"]
}
stage "sanity_check" "overlap" {
  shuffled_words = stage.overlap_score.idea_overlap["shuffled_words"]
  copy_reference = stage.overlap_score.idea_overlap["copy_reference"]
  target_oracle  = stage.overlap_score.idea_overlap["target_oracle"]
}
stage "sanity_check" "ranking" {
  check         = "tie"
  target_oracle = stage.insight_score.novelty["target_oracle"]
}

report "baselines" {
  title = "Sanity baselines through the Table 1 metrics"
  rows  = stage.generate_ideas.gen
  columns = [
    stage.similarity_score.rouge_l,
    stage.similarity_score.bertscore,
    stage.overlap_score.idea_overlap,
    stage.insight_score.novelty,
  ]
  item_name = "targets"
  intervals = true
  formats   = ["markdown", "csv", "latex"]
}

# One row: 1 where the metric or judge passes its check, 0 where it is flagged.
report "sanity" {
  title = "Sanity checks (1: passes; 0: flagged)"
  rows  = [stage.generate_ideas.gen["target_oracle"]]
  columns = [
    stage.sanity_check.rouge_l,
    stage.sanity_check.bertscore,
    stage.sanity_check.overlap,
    stage.sanity_check.ranking,
  ]
  formats = ["markdown", "csv", "latex"]
}
