# ScholarEval (Moussa et al., 2025) on ScholarIdeas: literature-grounded
# soundness and contribution reviews against a plain-LLM baseline, scored by
# coverage of the expert rubric (every rubric line, judged 1-5).
#
#   ideaflow run experiments/scholareval/coverage.hcl \
#     -var ideas=/path/to/ScholarIdeas -var corpus=/path/to/papers.jsonl
#
# The defaults run on a tiny self-written sample (data/) with the offline
# mock provider and the BM25 corpus kind: every number they give is
# SYNTHETIC. Point the models at a real provider and the literature at
# semantic_scholar (or a real corpus) to measure anything.

variable "ideas" {
  description = "the ScholarIdeas folder (one <domain>_<n>/ folder per idea)"
  default     = "data/ideas"
}

variable "corpus" {
  description = "the JSONL of papers the corpus provider indexes"
  default     = "data/corpus.jsonl"
}

variable "as_of" {
  description = "the literature snapshot searched: a new value re-runs every search"
  default     = "2026-12-01"
}

provider "mock" {
  kind = "mock"
  seed = 11
}

provider "papers" {
  kind = "corpus"
  path = var.corpus
}

model "reviewer" {
  provider    = provider.mock
  name        = "mock-reviewer"
  family      = "mock-reviewer"
  temperature = 0
}

model "judge" {
  provider    = provider.mock
  name        = "mock-judge"
  family      = "mock-judge"
  temperature = 0
}

model "literature" {
  provider = provider.papers
  name     = "corpus"
}

dataset "ideas" {
  format = "scholarideas"
  path   = var.ideas
}

# ---- soundness: methods -> snippets -> evidence per paper -> per-method review -> meta-review

stage "soundness_methods" "se" {
  ideas = dataset.ideas
  model = model.reviewer
}

stage "literature_search" "snippets" {
  queries    = stage.soundness_methods.se
  literature = model.literature
  op         = "snippets"
  as_of      = var.as_of
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
  model     = model.reviewer
}

# ---- contribution: statements -> paper search -> relevance 0-5 -> 25 sampled comparisons -> review

stage "contribution_dimensions" "se" {
  ideas = dataset.ideas
  model = model.reviewer
}

stage "literature_search" "papers" {
  queries    = stage.contribution_dimensions.se
  literature = model.literature
  op         = "search"
  as_of      = var.as_of
}

# The paper's paper augmentation: up to 8 papers recommended from the first
# 5 search results and up to 10 of their references, most cited first.
# Without it (drop augment below) the seeds alone are compared: its ablation.
stage "paper_augment" "se" {
  queries    = stage.contribution_dimensions.se
  search     = stage.literature_search.papers
  literature = model.literature
  as_of      = var.as_of
}

stage "contribution_relevance" "se" {
  dimensions = stage.contribution_dimensions.se
  search     = stage.literature_search.papers
  augment    = stage.paper_augment.se
  model      = model.reviewer
}

stage "contribution_compare" "se" {
  dimensions = stage.contribution_dimensions.se
  relevance  = stage.contribution_relevance.se
  model      = model.reviewer
}

stage "contribution_review" "se" {
  dimensions = stage.contribution_dimensions.se
  compare    = stage.contribution_compare.se
  model      = model.reviewer
}

# ---- baseline: the same reviewer without retrieval; its references resolved by title

stage "llm_review" "baseline" {
  ideas = dataset.ideas
  model = model.reviewer
}

stage "resolve_references" "baseline" {
  reviews    = stage.llm_review.baseline
  literature = model.literature
  as_of      = var.as_of
}

stage "reference_validity" "baseline" {
  resolved = stage.resolve_references.baseline
}

# ---- citations: the share of cited ids that were not retrieved for the idea

stage "citation_check" "scholareval" {
  reviews = [stage.soundness_review.se, stage.contribution_review.se]
}

stage "citation_check" "baseline" {
  reviews = [stage.llm_review.baseline]
}

# ---- coverage of every rubric line, per system

# Both systems are instances of one stage, so one table has a row each.
locals {
  systems = {
    scholareval = [stage.soundness_review.se, stage.contribution_review.se]
    baseline    = [stage.llm_review.baseline]
  }
}

stage "coverage" "review" {
  for_each   = local.systems
  ideas      = dataset.ideas
  reviews    = each.value
  judge      = model.judge
  prometheus = false # the mock answers "Rating: N"; a real Prometheus-style judge: true (the default)
}

# One score per group: overall, each discipline, axis, type and severity.
stage "coverage_score" "review" {
  coverage = stage.coverage.review
}

report "coverage" {
  title   = "Coverage of the expert rubrics (1-5), ScholarEval vs the plain-LLM baseline"
  rows      = stage.coverage_score.review
  row_order = ["scholareval", "baseline"]
  columns = [stage.coverage_score.review]
  labels = {
    scholareval                          = "ScholarEval"
    baseline                             = "LLM baseline"
    "coverage_score.review/overall"      = "Overall"
    "coverage_score.review/domain=ai"      = "AI"
    "coverage_score.review/domain=neuro"   = "Neuro"
    "coverage_score.review/domain=biochem" = "Biochem"
    "coverage_score.review/domain=eco"     = "Eco"
    "coverage_score.review/axis=soundness"    = "Soundness"
    "coverage_score.review/axis=contribution" = "Contribution"
    "coverage_score.review/type=strength"     = "Strengths"
    "coverage_score.review/type=weakness"     = "Weaknesses"
    "coverage_score.review/severity=major"    = "Major"
    "coverage_score.review/severity=minor"    = "Minor"
  }
  better  = { "coverage_score.review/overall" = "higher" }
  formats = ["markdown", "csv", "latex"]
}
