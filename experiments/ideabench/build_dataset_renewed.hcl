# Builds a new IdeaBench-style dataset from Semantic Scholar, the paper's
# way: biomedical papers of the top venues with at least one citation, and
# of other venues with at least 20, published in a window (here: from 2025,
# after the knowledge cutoff of the models to be tested), then every
# reference of each. The criteria are the records of data/target_queries.jsonl
# (id, query, venues, exclude_venues, fields_of_study, year,
# publication_date_or_year, min_citations, limit); edit the venue list to
# the Google Scholar ranking you follow, spelled as Semantic Scholar spells
# venues.
#
#   ideaflow plan experiments/ideabench/build_dataset_renewed.hcl   # offline: 2 searches, then up to 2 x 2,000 reference requests
#   ideaflow run  experiments/ideabench/build_dataset_renewed.hcl -var s2_key_env=S2_API_KEY --out data/ideabench-renewed
#
# The results folder holds targets.csv + references.jsonl (format =
# "ideabench-targets-csv" with references =), ideabench.jsonl and
# build_report.json. Targets without an abstract are left out, as in the
# paper, and listed in the report.

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

variable "targets_per_query" {
  description = "most targets a query yields"
  default     = 1000
}

provider "s2_renewed" {
  kind        = "semantic_scholar"
  api_key_env = var.s2_key_env
  base_url    = var.s2_url

  requests_per_second = var.s2_requests_per_second
}

model "s2_renewed" {
  provider = provider.s2_renewed
  name     = "semantic-scholar-graph-v1"

  price { # the API is free
    input_per_mtok  = 0
    output_per_mtok = 0
  }
}

dataset "target_queries" {
  format = "jsonl"
  path   = "data/target_queries.jsonl"
}

stage "find_targets" "renewed" {
  queries    = dataset.target_queries
  literature = model.s2_renewed
  as_of      = var.as_of
  limit      = var.targets_per_query
}

stage "fetch_references" "renewed" {
  targets    = stage.find_targets.renewed
  literature = model.s2_renewed
  as_of      = var.as_of
}

stage "write_ideabench_dataset" "renewed" {
  targets    = stage.find_targets.renewed
  references = stage.fetch_references.renewed
}
