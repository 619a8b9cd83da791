# A quick LiveIdeaBench on the mock provider (offline, seconds, every number
# labelled SYNTHETIC): 20 keywords, 3 generators, 2 ideas per keyword, a
# panel of 3 judges of which each idea gets 2, drawn for each idea alone
# and never its own model (the authors' rule: judge_b, of generator_b's
# family, does judge it; exclude = "family" would keep it out), one
# fluency pair per keyword and generator, the v2 protocol and fluency
# mapping, and the leaderboard with domains from the categories file.
#
#   ideaflow run experiments/liveideabench/quick.hcl
#
# Swap the mock provider for an openai-kind one (see leaderboard.hcl) to run
# it on real models.

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

stage "fluency" "pairs" {
  ideas = stage.generate_from_keyword.ideas
  panel = local.panel
  seed  = 1
}

stage "fluency" "jaccard" {
  ideas  = stage.generate_from_keyword.ideas
  method = "jaccard"
}

stage "liveideabench_score" "originality" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "originality"
}
stage "liveideabench_score" "feasibility" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "feasibility"
}
stage "liveideabench_score" "clarity" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "clarity"
}
stage "liveideabench_score" "fluency" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "fluency"
}
stage "liveideabench_score" "flexibility" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "flexibility"
}
stage "liveideabench_score" "average" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
}

stage "leaderboard" "quick" {
  ideas      = [stage.generate_from_keyword.ideas]
  judgements = [stage.judge_panel.scores]
  fluency    = [stage.fluency.pairs]
}

# Originality with a 95% bootstrap interval over keywords (each keyword's
# mean over its judgements is one item).
stage "bootstrap" "originality" {
  scores = stage.liveideabench_score.originality
}

report "quick" {
  rows     = stage.generate_from_keyword.ideas
  row_dims = ["model"]
  # Every column carries its stage's 95% interval over keywords (a mean
  # over judgements resampled by keyword); the bootstrap stage above is the
  # other reading, the mean of per-keyword means.
  columns = [
    stage.liveideabench_score.originality, stage.liveideabench_score.feasibility, stage.liveideabench_score.clarity,
    stage.liveideabench_score.fluency, stage.liveideabench_score.flexibility, stage.liveideabench_score.average,
  ]
  labels = {
    model                              = "Model"
    "liveideabench_score.originality"  = "Originality"
    "liveideabench_score.feasibility"  = "Feasibility"
    "liveideabench_score.clarity"      = "Clarity"
    "liveideabench_score.fluency"      = "Fluency"
    "liveideabench_score.flexibility"  = "Flexibility"
    "liveideabench_score.average"      = "Average"
  }
  better  = { "liveideabench_score.average" = "higher", "liveideabench_score.originality" = "higher" }
  formats = ["markdown", "csv", "latex"]
}

# LiveIdeaBench Fig. 5: originality against feasibility, point size the
# fluency, with the Pareto front.
stage "plot" "figure5" {
  kind    = "scatter"
  data    = [stage.liveideabench_score.originality]
  y       = [stage.liveideabench_score.feasibility]
  size    = [stage.liveideabench_score.fluency]
  color   = [stage.liveideabench_score.flexibility]
  size_label  = "fluency"
  color_label = "flexibility"
  title   = "Originality vs feasibility (size: fluency; colour: flexibility)"
  x_label = "originality"
  y_label = "feasibility"
  intervals = true # 95% bootstrap intervals as error bars where the value is a mean or percentile over items
}

# LiveIdeaBench Fig. 3: each model's average judgement score in each
# keyword domain.
stage "plot" "figure3" {
  kind    = "heatmap"
  data    = [stage.liveideabench_score.originality]
  value   = "domain=*"
  series  = "key"
  title   = "Originality by domain"
  x_label = "domain"
  y_label = "model"
  intervals = true # 95% bootstrap intervals as error bars where the value is a mean or percentile over items
}
