# IdeaBench Table 2 and Figure 4 (Guo et al.), run as the authors ran it
# (src/ablation_study.sh at amir-hassan25/IdeaBench @ 9dbd125): GPT-4o Mini
# given 1, 3, 5, 7, 10, 13, 15 or all references, filtered (drawn at random
# from the references passing the authors' filter) or unfiltered (drawn at
# random from every reference with an abstract); n = 3 ideas from three
# calls of the authors' prompt; mean semantic similarity (BERTScore F1 of
# the best idea, microsoft/deberta-xlarge-mnli at layer 40) and mean idea
# overlap (the authors' 1-10 rating, their parser) for Table 2, novelty and
# feasibility Insight Scores (target first, their parser) for Figure 4.
#
# The targets: the paper's text says those with at least 15 references;
# the authors' ablation_study() keeps those with at most 15 filtered
# references. The published subset (461 targets, their
# ablation_target_papers.csv) is at most 594 of the 2,374 (Table 4: a
# quarter or fewer have 14 or more filtered references) and cannot be the
# code's rule, which keeps at least 1,780: so subset = "at_least_15"
# (counting filtered references) is the default, and "at_most_15" runs the
# code's rule. See FIDELITY.md.
#
# ideaflow's own protocol is ablation_refs.debiased.hcl beside this file.
#
#   ideaflow run experiments/ideabench/ablation_refs.hcl            # offline, SYNTHETIC
#   ideaflow run experiments/ideabench/ablation_refs.hcl -var offline=false -var dataset=...
#
# Arms that give a target the same references send their requests once.

variable "offline" {
  description = "answer every call with the mock provider; false: the gateway and the token-embeddings sidecar below"
  default     = true
}
variable "dataset" {
  description = "the targets, ideabench JSONL with references"
  default     = "data/ablation_targets.jsonl"
}
variable "gateway_url" {
  description = "an OpenAI-compatible gateway serving the generator and the judge"
  default     = "http://localhost:8000/v1"
}
variable "gateway_rpm" {
  description = "the gateway's requests per minute (0: unlimited)"
  default     = 500
}
variable "bert_url" {
  description = "the token-embeddings sidecar (tools/token_embeddings_server.py) serving microsoft/deberta-xlarge-mnli"
  default     = "http://localhost:8090"
}
variable "seed" {
  description = "the seed of every arm's random draw of references (the authors' random.sample, unseeded)"
  default     = 0
}
variable "subset" {
  description = "the ablation's targets: \"at_least_15\" (the paper's text, and the published 461: at least 15 filtered references) or \"at_most_15\" (the authors' ablation_study code: at most 15 filtered references)"
  default     = "at_least_15"
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
provider "bert" {
  kind     = "transformers"
  base_url = var.bert_url
}

# ChatOpenAI's defaults, as the authors used it: temperature 0.7, no
# maximum length.
model "gpt4o_mini" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o-mini"
  family      = "openai-gpt4"
  temperature = 0.7
  # trained on data before this date (the paper: every generator before 2024-01-01)
  knowledge_cutoff = "2024-01-01"
}
model "judge" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4"
  temperature = 0.7
}
model "bert" {
  provider = var.offline ? provider.mock : provider.bert
  name     = "microsoft/deberta-xlarge-mnli"
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
  counts = ["1", "3", "5", "7", "10", "13", "15", "all"]
  arms = { for p in setproduct(["filtered", "unfiltered"], local.counts) : "${p[0]} ${p[1]}" => {
    mode  = p[0] == "filtered" ? "filtered" : "all"
    limit = p[1] == "all" ? 0 : tonumber(p[1])
  } }
  # The subset, by references passing the filter; the code's also keeps
  # only targets with at least 3 of them (its main filter ran first).
  subset = {
    at_least_15 = { min = 15, max = 0 }
    at_most_15  = { min = 3, max = 15 }
  }[var.subset]
}

stage "filter_references" "arms" {
  for_each       = local.arms
  dataset        = dataset.targets
  mode           = each.value.mode
  limit          = each.value.limit
  pick           = "random"
  seed           = var.seed
  min_filtered   = local.subset.min
  max_filtered   = local.subset.max
  min_references = 1 # one reference is an arm of its own
}

stage "generate_ideas" "arms" {
  model        = model.gpt4o_mini
  references   = stage.filter_references.arms
  n            = 3
  mode         = "independent"
  prompt_style = "authors"
}

stage "similarity" "bertscore" {
  ideas          = stage.generate_ideas.arms
  method         = "bertscore"
  model          = model.bert
  special_tokens = "bert_score"
}
stage "similarity_score" "similarity" {
  similarity = stage.similarity.bertscore
  summary    = "mean"
}

stage "best_idea" "most_similar" {
  ideas      = stage.generate_ideas.arms
  similarity = stage.similarity.bertscore
}
stage "overlap_rating" "overlap" {
  ideas        = stage.generate_ideas.arms
  judge        = model.judge
  similarity   = stage.best_idea.most_similar
  prompt_style = "authors"
  scale        = "1-10"
}
stage "overlap_score" "idea_overlap" {
  ratings = stage.overlap_rating.overlap
  summary = "mean"
  parse   = "authors"
}

stage "rank_ideas" "novelty" {
  ideas        = stage.generate_ideas.arms
  judge        = model.judge
  quality      = quality.novelty
  prompt_style = "authors"
  order        = "target_first"
}
stage "rank_ideas" "feasibility" {
  ideas        = stage.generate_ideas.arms
  judge        = model.judge
  quality      = quality.feasibility
  prompt_style = "authors"
  order        = "target_first"
}
stage "insight_score" "novelty_insight_score" {
  ranks = stage.rank_ideas.novelty
  parse = "authors"
}
stage "insight_score" "feasibility_insight_score" {
  ranks = stage.rank_ideas.feasibility
  parse = "authors"
}

report "table2" {
  title = "Table 2: semantic similarity and idea overlap of the ideas GPT-4o Mini generates with filtered and unfiltered references, by number of references (means; the authors' protocol and parsers)"
  rows  = stage.generate_ideas.arms
  columns = [
    stage.similarity_score.similarity,
    stage.overlap_score.idea_overlap,
  ]
  # The paper's four columns; the Insight Scores are Figure 4 (the plots below).
  # Keys are "MODE COUNT": the paper puts the number of references in rows
  # and filtered / unfiltered in columns.
  row_dims      = ["mode", "references"]
  key_separator = " "
  pivot         = "mode"
  row_order     = concat(["filtered", "unfiltered"], local.counts)
  labels = {
    references                                = "Num Ref"
    filtered                                  = "Filtered"
    unfiltered                                = "Unfiltered"
    all                                       = "All"
    "similarity_score.similarity"             = "Similarity"
    "overlap_score.idea_overlap"              = "Idea Overlap"
  }
  better = {
    "similarity_score.similarity"             = "higher"
    "overlap_score.idea_overlap"              = "higher"
  }
  # Bold: the highest of each measure; underlined: the higher of a row's
  # filtered and unfiltered value (the paper's marks). 95% bootstrap
  # intervals over the targets.
  item_name = "targets"
  intervals = true
  formats = ["markdown", "csv", "latex"]
}

# Figure 4 as a figure: the number of references on x, a line each for
# filtered and unfiltered. Keys are "MODE COUNT".
stage "plot" "figure4" {
  kind         = "line"
  data         = [stage.insight_score.novelty_insight_score, stage.insight_score.feasibility_insight_score]
  panels       = "stage"
  panel_titles = { "insight_score.novelty_insight_score" = "Novelty", "insight_score.feasibility_insight_score" = "Feasibility" }
  x            = "key[1]"
  series       = "key[0]"
  separator    = " "
  title        = "Figure 4: novelty and feasibility Insight Scores by number of filtered and unfiltered references"
  x_label      = "references given"
  y_label      = "Insight Score"
  intervals    = true # 95% bootstrap intervals over the targets as error bars
}

# Table 2's measures as a figure, in the same shape.
stage "plot" "figure4_similarity" {
  kind         = "line"
  data         = [stage.similarity_score.similarity, stage.overlap_score.idea_overlap]
  panels       = "stage"
  panel_titles = { "similarity_score.similarity" = "Semantic similarity", "overlap_score.idea_overlap" = "Idea overlap" }
  x            = "key[1]"
  series       = "key[0]"
  separator    = " "
  title        = "Semantic similarity and idea overlap by number of filtered and unfiltered references"
  x_label      = "references given"
  intervals    = true
}
