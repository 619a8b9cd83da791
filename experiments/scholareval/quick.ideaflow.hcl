# quick.ideaflow.hcl: quick.hcl's pipeline with ideaflow's earlier choices in
# place of the authors' protocol, to measure what they change (FIDELITY.md,
# "ScholarEval"; FIDELITY.md, "ScholarEval"). Every difference from
# quick.hcl:
#   - the coverage judge: ideaflow's prompt (prompts/coverage_ideaflow.tmpl:
#     no research plan, a reworded rubric), no system message, and the
#     judge model block's sampling (temperature 0) in place of
#     prometheus-eval's 1.0 / 0.9 / 1024;
#   - contribution: one relevance pass over the search's papers and the
#     added ones together; augmentation seeded by the first 5 search results
#     (one recommendation from all of them, 8 kept; their references, the 10
#     most cited kept); no embedding filter; a seeded sample of the relevant
#     papers compared (select = "sample") instead of the most relevant;
#   - one reviewer at temperature 0 for every step.
#
#   ideaflow run experiments/scholareval/quick.ideaflow.hcl
#
# On the mock provider every number is SYNTHETIC.

variable "offline" {
  description = "answer every call with the mock provider and the sample corpus; false: the gateway and Semantic Scholar below"
  default     = true
}

variable "ideas" {
  description = "the ScholarIdeas folder (one <domain>_<n>/ folder per idea)"
  default     = "data/ideas"
}

variable "corpus" {
  description = "the JSONL of papers the corpus provider indexes, or the evidence `ideaflow evidence` recorded from a run, replayed"
  default     = "data/corpus.jsonl"
}

variable "literature" {
  description = "where the literature comes from: \"corpus\" (the corpus file) or \"semantic_scholar\"; \"\": the corpus offline, Semantic Scholar otherwise (a real run on recorded evidence: -var offline=false -var literature=corpus -var corpus=evidence.jsonl)"
  default     = ""
}

variable "s2_url" {
  description = "base URL of Semantic Scholar's Graph API (\"\": the public API)"
  default     = ""
}

variable "s2_recommendations_url" {
  description = "base URL of its Recommendations API (\"\": the public API)"
  default     = ""
}

variable "s2_requests_per_second" {
  description = "Semantic Scholar request rate (0: the kind's default, 1 a second with a key)"
  default     = 0
}

variable "as_of" {
  description = "the literature snapshot searched: a new value re-runs every search"
  default     = "2026-12-01"
}

variable "gateway_url" {
  description = "an OpenAI-compatible gateway serving the reviewer, the judge and the embedding model"
  default     = "http://localhost:8000/v1"
}

variable "snippet_limit" {
  description = "snippets per method query (coverage.hcl: 20, the paper's and the code released with it; 8 at b8391a0)"
  default     = 5
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
  default     = 16
}

provider "mock" {
  kind = "mock"
  seed = 11
}

provider "gateway" {
  kind                = "openai"
  base_url            = var.gateway_url
  api_key_env         = "GATEWAY_API_KEY"
  requests_per_minute = var.gateway_rpm
  tokens_per_minute   = var.gateway_tpm
  max_concurrency     = var.gateway_max_concurrency
}

provider "papers" {
  kind = "corpus"
  path = var.corpus
}

provider "s2" {
  kind                = "semantic_scholar"
  api_key_env         = "S2_API_KEY"
  base_url            = var.s2_url
  recommendations_url = var.s2_recommendations_url
  requests_per_second = var.s2_requests_per_second
}

# The reviewer, at temperature 0 for every step (ideaflow's earlier
# choice; the authors' scripts set 0.1, 0 and 0.3 by step).
model "reviewer_extract" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4.1"
  family      = "openai-gpt4"
  temperature = 0
}

model "reviewer_relevance" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4.1"
  family      = "openai-gpt4"
  temperature = 0
}

model "reviewer" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4.1"
  family      = "openai-gpt4"
  temperature = 0
}

# The plain-LLM baseline: the same model without retrieval.
model "baseline" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4.1"
  family      = "openai-gpt4"
  temperature = 0
}

# The coverage judge at temperature 0 (sampling = "model" below).
model "judge" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4o"
  temperature = 0
}


model "literature" {
  provider = { corpus = provider.papers, semantic_scholar = provider.s2 }[var.literature != "" ? var.literature : (var.offline ? "corpus" : "semantic_scholar")]
  name     = "semantic-scholar"
}

dataset "ideas" {
  format = "scholarideas"
  path   = var.ideas
  limit  = 2
}

# ---- soundness: methods -> snippets -> evidence per paper -> per-method review -> meta-review

stage "soundness_methods" "se" {
  ideas       = dataset.ideas
  model       = model.reviewer_extract
  max_methods = 3
}

stage "literature_search" "snippets" {
  queries    = stage.soundness_methods.se
  literature = model.literature
  op         = "snippets"
  as_of      = var.as_of
  limit      = var.snippet_limit
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

# ---- contribution: statements -> paper search -> augmentation -> relevance -> a sample compared -> review

stage "contribution_dimensions" "se" {
  ideas                 = dataset.ideas
  model                 = model.reviewer_extract
  max_statements        = 3
  queries_per_statement = 1
}

stage "literature_search" "papers" {
  queries    = stage.contribution_dimensions.se
  literature = model.literature
  op         = "search"
  as_of      = var.as_of
  limit      = 5
}

# ideaflow's earlier augmentation: the first 5 search results seed one
# recommendation and give their references, the most cited kept.
stage "paper_augment" "se" {
  queries         = stage.contribution_dimensions.se
  search          = stage.literature_search.papers
  literature      = model.literature
  as_of           = var.as_of
  seed_from       = "search"
  reference_order = "most_cited"
}

# One relevance pass over the searched and the added papers together.
stage "contribution_relevance" "se" {
  dimensions = stage.contribution_dimensions.se
  search     = stage.literature_search.papers
  augment    = stage.paper_augment.se
  model      = model.reviewer_relevance
}

# A seeded sample of the relevant papers.
stage "contribution_compare" "se" {
  dimensions = stage.contribution_dimensions.se
  relevance  = stage.contribution_relevance.se
  model      = model.reviewer
  select     = "sample"
  sample     = 5
}

stage "contribution_review" "se" {
  dimensions = stage.contribution_dimensions.se
  compare    = stage.contribution_compare.se
  model      = model.reviewer
}

# ---- baseline: the same reviewer without retrieval; its references resolved by title

stage "llm_review" "baseline" {
  ideas = dataset.ideas
  model = model.baseline
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
  prompt     = file("prompts/coverage_ideaflow.tmpl")
  system     = ""
  sampling   = "model"
  prometheus = !var.offline # the mock answers "Rating: N"
}

# The paper's main coverage table: overall and each discipline.
stage "coverage_score" "review" {
  coverage = stage.coverage.review
  groups   = ["overall", "domain"]
}

# Its breakdowns by rubric axis, type and severity (the appendix's). These
# are the nodes one instance giving every group would lay out (a group's
# node is keyed by its slot, whichever others are given): a cache filled
# before the split serves both.
stage "coverage_score" "breakdown" {
  coverage = stage.coverage.review
  groups   = ["axis", "type", "severity"]
}

report "coverage" {
  title     = "Coverage of the expert rubrics (1-5), ScholarEval vs the plain-LLM baseline"
  rows      = stage.coverage_score.review
  row_order = ["scholareval", "baseline"]
  columns   = [stage.coverage_score.review]
  labels = {
    scholareval                               = "ScholarEval"
    baseline                                  = "LLM baseline"
    "coverage_score.review/overall"           = "Overall"
    "coverage_score.review/domain=ai"         = "AI"
    "coverage_score.review/domain=neuro"      = "Neuro"
    "coverage_score.review/domain=biochem"    = "Biochem"
    "coverage_score.review/domain=eco"        = "Eco"
  }
  better = { "coverage_score.review/overall" = "higher" }
  # 95% bootstrap intervals over the rubrics (each rubric point one item).
  item_name = "rubrics"
  intervals = true
  formats = ["markdown", "csv", "latex"]
  # Five columns with intervals: the page width (table*).
  width = "\\textwidth"
}

report "coverage_breakdown" {
  title     = "Coverage of the expert rubrics (1-5) by rubric axis, type and severity"
  rows      = stage.coverage_score.breakdown
  row_order = ["scholareval", "baseline"]
  columns   = [stage.coverage_score.breakdown]
  labels = {
    scholareval                                    = "ScholarEval"
    baseline                                       = "LLM baseline"
    "coverage_score.breakdown/axis=soundness"      = "Soundness"
    "coverage_score.breakdown/axis=contribution"   = "Contribution"
    "coverage_score.breakdown/type=strength"       = "Strengths"
    "coverage_score.breakdown/type=weakness"       = "Weaknesses"
    "coverage_score.breakdown/severity=major"      = "Major"
    "coverage_score.breakdown/severity=minor"      = "Minor"
  }
  better = {
    "coverage_score.breakdown/axis=soundness"     = "higher"
    "coverage_score.breakdown/axis=contribution"  = "higher"
    "coverage_score.breakdown/type=strength"      = "higher"
    "coverage_score.breakdown/type=weakness"      = "higher"
    "coverage_score.breakdown/severity=major"     = "higher"
    "coverage_score.breakdown/severity=minor"     = "higher"
  }
  item_name = "rubrics"
  formats   = ["markdown", "csv", "latex"]
  width     = "\\textwidth"
}

# ---- reference invalidity (the paper's Table 2): the share of each system's
# references that point at no paper. The authors fetch every link of a
# review; ideaflow's reviews cite retrieved ids and the baseline lists
# titles, so here an id that was not retrieved, or a title that matches no
# paper, is invalid (FIDELITY.md, "ScholarEval").

locals {
  invalidity = {
    scholareval = { reviews = [stage.soundness_review.se, stage.contribution_review.se], resolved = [] }
    baseline    = { reviews = [stage.llm_review.baseline], resolved = [stage.resolve_references.baseline] }
  }
}

stage "reference_invalidity" "review" {
  for_each = local.invalidity
  reviews  = each.value.reviews
  resolved = each.value.resolved
}

report "reference_invalidity" {
  title     = "Reference invalidity (%): references that point at no paper, a lower bound"
  rows      = stage.reference_invalidity.review
  row_order = ["scholareval", "baseline"]
  columns   = [stage.reference_invalidity.review]
  labels = {
    scholareval                   = "ScholarEval"
    baseline                      = "LLM baseline"
    "reference_invalidity.review" = "Reference Inv. (%)"
  }
  better  = { "reference_invalidity.review" = "lower" }
  digits  = 1
  item_name = "ideas"
  intervals = true
  formats   = ["markdown", "csv", "latex"]
}

# ---- pairwise preference (the paper's Table 3): a judge reads both
# systems' reviews of an idea, in a random order, and names the better one
# or a tie for evidence support, actionability and depth (llm_metrics.py).

# llm_metrics.py takes the judge as --llm_engine_name and calls it at
# temperature 0; the paper's Table 3 judge is not named in the code.
model "pairwise_judge" {
  provider    = var.offline ? provider.mock : provider.gateway
  name        = "openai/gpt-4o"
  family      = "openai-gpt4o"
  temperature = 0
}

stage "pairwise_preference" "pairs" {
  for_each     = { scholareval_vs_baseline = "" }
  ideas        = dataset.ideas
  a            = [stage.soundness_review.se, stage.contribution_review.se]
  b            = [stage.llm_review.baseline]
  judge        = model.pairwise_judge
  json_winners = !var.offline # the mock answers fields; the authors' judge answers JSON winners
}

# One score per criterion and outcome: the percentage of pairs won by
# ScholarEval (a), tied, or won by the baseline (b).
stage "preference_score" "pairs" {
  preferences = stage.pairwise_preference.pairs
}

report "preference" {
  title   = "Pairwise preference (%), ScholarEval (a) vs the plain-LLM baseline (b)"
  rows    = stage.preference_score.pairs
  columns = [stage.preference_score.pairs]
  labels = {
    scholareval_vs_baseline                   = "ScholarEval vs LLM baseline"
    "preference_score.pairs/evidence-based=a"   = "Evidence: win"
    "preference_score.pairs/evidence-based=tie" = "Evidence: tie"
    "preference_score.pairs/evidence-based=b"   = "Evidence: loss"
    "preference_score.pairs/actionability=a"    = "Actionability: win"
    "preference_score.pairs/actionability=tie"  = "Actionability: tie"
    "preference_score.pairs/actionability=b"    = "Actionability: loss"
    "preference_score.pairs/depth=a"            = "Depth: win"
    "preference_score.pairs/depth=tie"          = "Depth: tie"
    "preference_score.pairs/depth=b"            = "Depth: loss"
  }
  digits  = 1
  item_name = "pairs"
  # Percentages of pairs: no bootstrap of a share the report cannot recompute.
  intervals = false
  formats   = ["markdown", "csv", "latex"]
}
