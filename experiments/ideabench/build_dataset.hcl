# Builds IdeaBench's references from Semantic Scholar for the paper's
# published targets (the 461 of ablation_target_papers.csv, or any CSV of
# the same columns): every reference of every target, every page, with its
# citation intents and contexts, citation count and publication types.
#
#   ideaflow data get ideabench                                  # the authors' target list, once
#   ideaflow plan experiments/ideabench/build_dataset.hcl        # offline: 461 requests, ~8 min at 1 request/s
#   export S2_API_KEY=...                                        # optional: a key's dedicated rate
#   ideaflow run  experiments/ideabench/build_dataset.hcl -var s2_key_env=S2_API_KEY --out data/ideabench-2026-12
#
# Run it as a single file: the other experiments of this folder are not part
# of it. The results folder then holds references.jsonl (join it to the
# targets: dataset { format = "ideabench-targets-csv", path = <the CSV>,
# references = "<results>/references.jsonl" }), ideabench.jsonl (the
# targets with their references, format = "ideabench"), and
# build_report.json (targets without references, unresolved references,
# failures). Every request is cached: an interrupted build resumes, and a
# re-run with the same as_of makes no request; a new as_of fetches afresh.
#
# For a bare list of paper ids (a CSV with a paperId column and nothing
# else), look the targets up too and write targets.csv from the answers:
#   dataset "ids" { format = "csv", path = "ids.csv", id_field = "paperId" }
#   stage "lookup_papers" "ids" { ids = dataset.ids, literature = model.s2, as_of = var.as_of }
# with fetch_references' targets = dataset.ids and the writer's
# targets = stage.lookup_papers.ids.

variable "targets_csv" {
  description = "the target list: IdeaBench's CSV (paperId, title, abstract, year, ..., abstract_summary); by default the authors' own, which `ideaflow data get ideabench` downloads"
  default     = authors_file("ideabench", "data/dataset/ablation_target_papers.csv")
}

variable "as_of" {
  description = "the literature snapshot read; change it to fetch again"
  default     = "2026-12-01"
}

variable "s2_key_env" {
  description = "environment variable holding a Semantic Scholar API key (\"\": the unauthenticated shared pool, 1 request per 3 s)"
  default     = ""
}

variable "s2_requests_per_second" {
  description = "request rate (0: the kind's default, 1 a second with a key, 1 per 3 s without)"
  default     = 0
}

variable "s2_url" {
  description = "base URL of the Graph API (\"\": the public API)"
  default     = ""
}

provider "s2" {
  kind        = "semantic_scholar"
  api_key_env = var.s2_key_env
  base_url    = var.s2_url

  requests_per_second = var.s2_requests_per_second
}

model "s2" {
  provider = provider.s2
  name     = "semantic-scholar-graph-v1"

  price { # the API is free
    input_per_mtok  = 0
    output_per_mtok = 0
  }
}

dataset "ideabench_targets" {
  format = "ideabench-targets-csv"
  path   = var.targets_csv
}

stage "fetch_references" "ideabench" {
  targets    = dataset.ideabench_targets
  literature = model.s2
  as_of      = var.as_of
}

stage "write_ideabench_dataset" "ideabench" {
  targets    = dataset.ideabench_targets
  references = stage.fetch_references.ideabench
}
