# An adaptive LiveIdeaBench (issue 25): the keywords are taken in a seeded
# random order, 4 at a time, and after each round every generator's mean
# judgement score is followed by an anytime-valid confidence sequence
# (Waudby-Smith & Ramdas 2023; stages/stats). The run stops as soon as
# every pair of generators is separated (intervals disjoint) or tied
# (within 1 point), at 95% over the whole board, or once it has spent
# 600 calls, or when the keywords run out. Looking after every round does
# not inflate the error rate: that is what the sequences are for.
#
#   ideaflow plan experiments/liveideabench/adaptive.hcl   # the full run: an upper bound
#   ideaflow run  experiments/liveideabench/adaptive.hcl   # the mock provider, labelled SYNTHETIC
#
# On the mock every generator answers alike, so expect the run to go to
# the budget or the last keyword. Raising the target later (half_width =
# 0.5, separated = 0.99, a larger max_calls) runs the rounds already run
# from the cache, with no call repeated, and goes on from there: round k's
# keywords are always a prefix of round k+1's (stop_when's seed).
#
# For the full board, point dataset.keywords at the authors' 1,180
# keywords (see leaderboard_v2.hcl) and the models at a gateway. Measured
# on that shape with scripted judges (stages/adaptive): five tiers of
# models a point apart, round = 20, tie = 0.75, method = "betting" took
# 24.8% of the full run's calls, with 0 of 200 seeded repetitions wrong;
# a board spread evenly (no tiers) runs to the end.

provider "mock" {
  kind = "mock"
  seed = 11
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

locals {
  generators = [model.generator_a, model.generator_b, model.generator_c]
  panel      = [model.judge_a, model.judge_b, model.judge_c]
}

dataset "keywords" {
  format     = "keywords"
  path       = "data/quick_keywords.txt"
  categories = "data/quick_categories.csv"
}

stage "generate_from_keyword" "ideas" {
  for_each          = { for m in local.generators : m.name => m }
  keywords          = dataset.keywords
  model             = each.value
  ideas_per_keyword = 2
}

stage "judge_panel" "scores" {
  ideas           = stage.generate_from_keyword.ideas
  panel           = local.panel
  judges_per_idea = 2
  seed            = 1
}

stage "liveideabench_score" "originality" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  metric     = "originality"
}

report "adaptive" {
  rows     = stage.generate_from_keyword.ideas
  row_dims = ["model"]
  columns  = [stage.liveideabench_score.originality]
  labels   = { model = "Model", "liveideabench_score.originality" = "Originality" }
  formats  = ["markdown", "csv", "latex"]
}

stop_when {
  items     = dataset.keywords    # taken in rounds, in a seeded order
  scores    = stage.judge_panel.scores # a judgement's mean is its score; one instance per generator
  round     = 4
  seed      = 2025
  separated = 0.95
  tie       = 1.0
  max_calls = 600
  method    = "betting"
  range     = [1, 10]
}
