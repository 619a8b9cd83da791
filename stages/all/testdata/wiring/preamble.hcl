# The models, providers and quality every wiring experiment shares
# (wiring_test.go). Datasets and stages are one block a file, under
# datasets/ and stages/: each stage file is the minimal instance of its
# type, named "x", fed by other files' instances.

variable "data" {
  description = "this folder's data/"
}
variable "repo" {
  description = "the repository root, for the shipped sample data"
}

provider "mock" {
  kind = "mock"
  seed = 5
}
provider "corpus" {
  kind = "corpus"
  path = "${var.repo}/experiments/scholareval/data/corpus.jsonl"
}

model "gen_a" {
  provider = provider.mock
  name     = "mock-gen-a"
  family   = "fam-a"
}
model "gen_b" {
  provider = provider.mock
  name     = "mock-gen-b"
  family   = "fam-b"
}
model "judge_a" {
  provider    = provider.mock
  name        = "mock-judge-a"
  family      = "fam-j1"
  temperature = 0
}
model "judge_b" {
  provider    = provider.mock
  name        = "mock-judge-b"
  family      = "fam-j2"
  temperature = 0
}
model "judge_c" {
  provider    = provider.mock
  name        = "mock-judge-c"
  family      = "fam-j3"
  temperature = 0
}
model "embed" {
  provider = provider.mock
  name     = "mock-embed"
}
model "corpus" {
  provider = provider.corpus
  name     = "corpus"
}
model "mocklit" {
  provider = provider.mock
  name     = "mock-literature"
}

quality "q" {
  definition = "how new the idea is relative to what is known"
}
