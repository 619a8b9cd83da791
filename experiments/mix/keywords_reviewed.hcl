# LiveIdeaBench's keyword ideas reviewed by ScholarEval (issue 25): does what
# the panel calls original survive a literature check?
#
#   keywords -> one idea per keyword from each of quick.hcl's generators
#     - the LiveIdeaBench panel (quick.hcl's: 2 of 3 judges per idea,
#       never the generator),
#     - ScholarEval's soundness review against the sample corpus,
#   and cross_agreement between the panel's originality and the review's
#   soundness score: per idea, and between the generators' means.
#
# The generation and panel blocks are experiments/liveideabench/quick.hcl's
# (same models, mock seed and judge draws): its sample 0 is this file's
# one idea per keyword (a review reads one idea an item), so after quick.hcl
# every generation and judgement here is cached and the mix pays only for
# the reviews.
#
#   ideaflow run experiments/liveideabench/quick.hcl
#   ideaflow plan experiments/mix/keywords_reviewed.hcl
#   ideaflow run experiments/mix/keywords_reviewed.hcl
#   ideaflow show stage.cross_agreement.originality experiments/mix/keywords_reviewed.hcl
#
# Every answer is the mock's: every number is SYNTHETIC.

variable "resamples" {
  description = "bootstrap resamples of the keywords for every interval"
  default     = 1000
}

provider "mock" {
  kind = "mock"
  seed = 11 # quick.hcl's
}

provider "papers" {
  kind = "corpus"
  path = "../scholareval/data/corpus.jsonl"
}

model "generator_a" {
  provider    = provider.mock
  name        = "mock-generator-a"
  family      = "mock-a"
  temperature = 0.8
}

model "generator_b" {
  provider    = provider.mock
  name        = "mock-generator-b"
  family      = "mock-b"
  temperature = 0.8
}

model "generator_c" {
  provider    = provider.mock
  name        = "mock-generator-c"
  family      = "mock-c"
  temperature = 0.8
}

model "judge_a" {
  provider = provider.mock
  name     = "mock-judge-a"
  family   = "mock-judges"
}

model "judge_b" {
  provider = provider.mock
  name     = "mock-judge-b"
  family   = "mock-b"
}

model "judge_c" {
  provider = provider.mock
  name     = "mock-judge-c"
  family   = "mock-judges-c"
}

model "reviewer" {
  provider    = provider.mock
  name        = "mock-reviewer"
  family      = "mock-reviewers"
  temperature = 0
}

model "literature" {
  provider = provider.papers
  name     = "semantic-scholar"
}

locals {
  generators = [model.generator_a, model.generator_b, model.generator_c]
  panel      = [model.judge_a, model.judge_b, model.judge_c]
}

dataset "keywords" {
  format     = "keywords"
  path       = "../liveideabench/data/quick_keywords.txt"
  categories = "../liveideabench/data/quick_categories.csv"
}

stage "generate_from_keyword" "ideas" {
  for_each          = { for m in local.generators : m.name => m }
  keywords          = dataset.keywords
  model             = each.value
  ideas_per_keyword = 1
}

stage "judge_panel" "scores" {
  ideas           = stage.generate_from_keyword.ideas
  panel           = local.panel
  judges_per_idea = 2
  seed            = 1
}

stage "soundness_methods" "se" {
  ideas       = stage.generate_from_keyword.ideas
  model       = model.reviewer
  max_methods = 3
}

stage "literature_search" "snippets" {
  queries    = stage.soundness_methods.se
  literature = model.literature
  op         = "snippets"
  as_of      = "2026-12-01"
  limit      = 5
  use_cutoff = false # a keyword's idea has no date to search before
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

stage "cross_agreement" "originality" {
  panels      = [stage.judge_panel.scores]
  reviews     = [stage.soundness_review.se]
  panel_score = "originality"
  resamples   = var.resamples
}
