# IdeaBench Table 2 and Figure 4 (Guo et al.): GPT-4o Mini on the targets
# with at least 15 references, given 1, 3, 5, 7, 10, 13, 15 or all
# references, filtered (the paper's filter) or unfiltered (a seeded random
# draw of the same number, the paper's random-filtering baseline; "all"
# unfiltered is every reference with an abstract). Mean semantic similarity
# (BERTScore F1) and idea overlap (Table 2), novelty and feasibility Insight
# Scores (Figure 4).
#
#   ideaflow run experiments/ideabench/ablation_refs.hcl            # offline, SYNTHETIC
#   ideaflow run experiments/ideabench/ablation_refs.hcl -var offline=false -var dataset=...
#
# Arms that give a target the same references (a target with 11 filtered
# references has equal "filtered 13", "filtered 15" and "filtered all")
# send their requests once.

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
variable "tei_url" {
  description = "a text-embeddings-inference server for BERTScore token embeddings"
  default     = "http://localhost:8080"
}
variable "seed" {
  description = "the seed of the unfiltered arms' random draws"
  default     = 0
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
model "bert" {
  provider = var.offline ? provider.mock : provider.tei
  name     = "roberta-large"
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

locals {
  counts = ["1", "3", "5", "7", "10", "13", "15", "all"]
  arms = { for p in setproduct(["filtered", "unfiltered"], local.counts) : "${p[0]} ${p[1]}" => {
    mode  = p[0] == "filtered" ? "filtered" : (p[1] == "all" ? "all" : "random")
    limit = p[1] == "all" ? 0 : tonumber(p[1])
  } }
}

stage "filter_references" "arms" {
  for_each       = local.arms
  dataset        = dataset.targets
  mode           = each.value.mode
  limit          = each.value.limit
  seed           = var.seed
  min_references = 1 # one reference is an arm of its own
}

stage "generate_ideas" "arms" {
  model      = model.gpt4o_mini
  references = stage.filter_references.arms
  n          = 3
  mode       = "batch"
}

stage "similarity" "bertscore" {
  ideas  = stage.generate_ideas.arms
  method = "bertscore"
  model  = model.bert
}
stage "similarity_score" "similarity" {
  similarity = stage.similarity.bertscore
}

stage "best_idea" "most_similar" {
  ideas      = stage.generate_ideas.arms
  similarity = stage.similarity.bertscore
}
stage "overlap_rating" "overlap" {
  ideas      = stage.generate_ideas.arms
  judge      = model.judge
  similarity = stage.best_idea.most_similar
}
stage "overlap_score" "idea_overlap" {
  ratings = stage.overlap_rating.overlap
}

stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.arms
  judge   = model.judge
  quality = quality.novelty
}
stage "rank_ideas" "feasibility" {
  ideas   = stage.generate_ideas.arms
  judge   = model.judge
  quality = quality.feasibility
}
stage "insight_score" "novelty_insight_score" {
  ranks = stage.rank_ideas.novelty
}
stage "insight_score" "feasibility_insight_score" {
  ranks = stage.rank_ideas.feasibility
}

report "table2" {
  title = "IdeaBench Table 2 / Figure 4: GPT-4o Mini by number of references, filtered and unfiltered (means)"
  rows  = stage.generate_ideas.arms
  columns = [
    stage.similarity_score.similarity,
    stage.overlap_score.idea_overlap,
    stage.insight_score.novelty_insight_score,
    stage.insight_score.feasibility_insight_score,
  ]
  # Keys are "MODE COUNT": the paper puts the number of references in rows
  # and filtered / unfiltered in columns.
  row_dims      = ["mode", "references"]
  key_separator = " "
  pivot         = "mode"
  row_order     = concat(["filtered", "unfiltered"], local.counts)
  labels = {
    references                                = "# References"
    filtered                                  = "Filtered"
    unfiltered                                = "Unfiltered"
    all                                       = "All"
    "similarity_score.similarity"             = "Semantic Similarity"
    "overlap_score.idea_overlap"              = "Idea Overlap"
    "insight_score.novelty_insight_score"     = "Novelty Insight Score"
    "insight_score.feasibility_insight_score" = "Feasibility Insight Score"
  }
  better = {
    "similarity_score.similarity"             = "higher"
    "overlap_score.idea_overlap"              = "higher"
    "insight_score.novelty_insight_score"     = "higher"
    "insight_score.feasibility_insight_score" = "higher"
  }
  formats = ["markdown", "csv", "latex"]
}

# Figure 4 as a figure: the number of references on x, a line each for
# filtered and unfiltered. Keys are "MODE COUNT".
stage "plot" "figure4_novelty" {
  kind      = "line"
  data      = [stage.insight_score.novelty_insight_score]
  x         = "key[1]"
  series    = "key[0]"
  separator = " "
  title     = "Figure 4: novelty Insight Score by number of references"
  x_label   = "references given"
  y_label   = "novelty Insight Score"
}
stage "plot" "figure4_feasibility" {
  kind      = "line"
  data      = [stage.insight_score.feasibility_insight_score]
  x         = "key[1]"
  series    = "key[0]"
  separator = " "
  title     = "Figure 4: feasibility Insight Score by number of references"
  x_label   = "references given"
  y_label   = "feasibility Insight Score"
}
