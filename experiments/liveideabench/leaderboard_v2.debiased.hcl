# The ablation of leaderboard_v2.hcl (LiveIdeaBench's current protocol):
# the same run with ideaflow's choices where they differ from the
# authors' code, and nothing else changed:
#
#   refusals      drop_refused = true: an idea whose fallback answer is a
#                 refusal too is left out, where the authors judge it
#                 whatever it says
#   judge panel   exclude = "family" and draw = "shared" (see
#                 leaderboard.debiased.hcl)
#   fluency       exclude = "family", draw = "shared": the paper's
#                 independence, where hash.py draws any critic
#   scores        parse = "strict"
#
# Every request both files send alike is one cached call. FIDELITY.md gives the
# measured differences on scripted judges.
#
#   ideaflow plan experiments/liveideabench/leaderboard_v2.debiased.hcl
#   OPENROUTER_API_KEY=... ideaflow run experiments/liveideabench/leaderboard_v2.debiased.hcl

variable "keywords" {
  default = authors_file("liveideabench", "csvs/kws.csv")
}
variable "categories" {
  default = authors_file("liveideabench", "csvs/keyword_classifications.csv")
}
variable "base_url" {
  default = "https://openrouter.ai/api/v1"
}
variable "offline" {
  default = false # true: every model on the mock provider
}
variable "ideas_per_keyword" {
  default = 2
}
variable "judges_per_idea" {
  default = 3
}

variable "router_rpm" {
  description = "the router's requests per minute (0: unlimited)"
  default     = 600
}
variable "router_tpm" {
  description = "the router's tokens per minute, estimated before and settled after each call (0: unlimited)"
  default     = 0
}
variable "router_max_concurrency" {
  description = "calls in flight at once on the router (lowered adaptively when many are answered 429)"
  default     = 32
}
variable "sample_seed" {
  description = "the seed sent with every call; sample s of a keyword sends sample_seed + s, so a keyword's two ideas are distinct requests that no caching gateway answers alike (the authors sent none: each API's default sampling)"
  default     = 2024
}
variable "panel_seed" {
  description = "the seed of each idea's draw of judges and of the fluency pairs"
  default     = 2025
}

provider "router" {
  kind                = "openai"
  base_url            = var.base_url
  api_key_env         = "OPENROUTER_API_KEY"
  requests_per_minute = var.router_rpm
  tokens_per_minute   = var.router_tpm
  max_concurrency     = var.router_max_concurrency
}

provider "mock" {
  kind = "mock"
  seed = 2024
}

locals {
  provider = var.offline ? provider.mock : provider.router
}

# The 41 models of config.py (IDEA_MODELS, the critics among them) at 6fc8285, as it names them.

model "gemini_2_0_flash_exp_free" {
  provider = local.provider
  name     = "google/gemini-2.0-flash-exp:free"
  family   = "google"
  seed     = var.sample_seed
}

model "claude_3_7_sonnet" {
  provider = local.provider
  name     = "anthropic/claude-3.7-sonnet"
  family   = "anthropic"
  seed     = var.sample_seed
}

model "o1" {
  provider = local.provider
  name     = "openai/o1"
  family   = "openai"
  seed     = var.sample_seed
}

model "o3_mini" {
  provider = local.provider
  name     = "openai/o3-mini"
  family   = "openai"
  seed     = var.sample_seed
}

model "o1_mini" {
  provider = local.provider
  name     = "openai/o1-mini"
  family   = "openai"
  seed     = var.sample_seed
}

model "step_2_16k_202411" {
  provider = local.provider
  name     = "step-2-16k-202411"
  family   = "stepfun"
  seed     = var.sample_seed
}

model "gpt_4o_2024_11_20" {
  provider = local.provider
  name     = "openai/gpt-4o-2024-11-20"
  family   = "openai"
  seed     = var.sample_seed
}

model "deepseek_r1_distill_llama_70b" {
  provider = local.provider
  name     = "deepseek/deepseek-r1-distill-llama-70b"
  family   = "deepseek"
  seed     = var.sample_seed
}

model "gemini_pro_1_5" {
  provider = local.provider
  name     = "google/gemini-pro-1.5"
  family   = "google"
  seed     = var.sample_seed
}

model "grok_2_1212" {
  provider = local.provider
  name     = "x-ai/grok-2-1212"
  family   = "xai"
  seed     = var.sample_seed
}

model "gemini_2_0_flash_lite_001" {
  provider = local.provider
  name     = "google/gemini-2.0-flash-lite-001"
  family   = "google"
  seed     = var.sample_seed
}

model "qwen2_5_dracarys2_72b_q4_k_m" {
  provider = local.provider
  name     = "sammcj/qwen2.5-dracarys2-72b:Q4_K_M"
  family   = "qwen"
  seed     = var.sample_seed
}

model "llama_3_1_405b_instruct" {
  provider = local.provider
  name     = "meta-llama/llama-3.1-405b-instruct"
  family   = "meta-llama"
  seed     = var.sample_seed
}

model "qwen_2_5_72b_instruct" {
  provider = local.provider
  name     = "qwen/qwen-2.5-72b-instruct"
  family   = "qwen"
  seed     = var.sample_seed
}

model "gpt_4_turbo" {
  provider = local.provider
  name     = "openai/gpt-4-turbo"
  family   = "openai"
  seed     = var.sample_seed
}

model "llama_3_3_70b_instruct" {
  provider = local.provider
  name     = "meta-llama/llama-3.3-70b-instruct"
  family   = "meta-llama"
  seed     = var.sample_seed
}

model "claude_3_opus" {
  provider = local.provider
  name     = "anthropic/claude-3-opus"
  family   = "anthropic"
  seed     = var.sample_seed
}

model "mistral_large_2411" {
  provider = local.provider
  name     = "mistralai/mistral-large-2411"
  family   = "mistral"
  seed     = var.sample_seed
}

model "qwen_2_5_coder_32b_instruct" {
  provider = local.provider
  name     = "qwen/qwen-2.5-coder-32b-instruct"
  family   = "qwen"
  seed     = var.sample_seed
}

model "deepseek_r1_distill_qwen_32b" {
  provider = local.provider
  name     = "deepseek/deepseek-r1-distill-qwen-32b"
  family   = "deepseek"
  seed     = var.sample_seed
}

model "llama_3_1_70b_instruct" {
  provider = local.provider
  name     = "meta-llama/llama-3.1-70b-instruct"
  family   = "meta-llama"
  seed     = var.sample_seed
}

model "nova_pro_v1" {
  provider = local.provider
  name     = "amazon/nova-pro-v1"
  family   = "amazon"
  seed     = var.sample_seed
}

model "claude_3_5_haiku_20241022" {
  provider = local.provider
  name     = "anthropic/claude-3.5-haiku-20241022"
  family   = "anthropic"
  seed     = var.sample_seed
}

model "mistral_small_24b_instruct_2501" {
  provider = local.provider
  name     = "mistralai/mistral-small-24b-instruct-2501"
  family   = "mistral"
  seed     = var.sample_seed
}

model "phi_4" {
  provider = local.provider
  name     = "microsoft/phi-4"
  family   = "microsoft"
  seed     = var.sample_seed
}

model "gpt_4o_mini" {
  provider = local.provider
  name     = "openai/gpt-4o-mini"
  family   = "openai"
  seed     = var.sample_seed
}

model "qwq_32b_preview" {
  provider = local.provider
  name     = "qwen/qwq-32b-preview"
  family   = "qwen"
  seed     = var.sample_seed
}

model "nova_lite_v1" {
  provider = local.provider
  name     = "amazon/nova-lite-v1"
  family   = "amazon"
  seed     = var.sample_seed
}

model "qwen_2_5_7b_instruct" {
  provider = local.provider
  name     = "qwen/qwen-2.5-7b-instruct"
  family   = "qwen"
  seed     = var.sample_seed
}

model "mistral_small" {
  provider = local.provider
  name     = "mistralai/mistral-small"
  family   = "mistral"
  seed     = var.sample_seed
}

model "gemma_2_27b_it" {
  provider = local.provider
  name     = "google/gemma-2-27b-it"
  family   = "google"
  seed     = var.sample_seed
}

model "claude_3_7_sonnet_thinking" {
  provider = local.provider
  name     = "anthropic/claude-3.7-sonnet:thinking"
  family   = "anthropic"
  seed     = var.sample_seed
}

model "o3_mini_high" {
  provider = local.provider
  name     = "openai/o3-mini-high"
  family   = "openai"
  seed     = var.sample_seed
}

model "gpt_4_5_preview" {
  provider = local.provider
  name     = "openai/gpt-4.5-preview"
  family   = "openai"
  seed     = var.sample_seed
}

model "qwq_32b" {
  provider = local.provider
  name     = "qwen/qwq-32b"
  family   = "qwen"
  seed     = var.sample_seed
}

model "deepseek_r1" {
  provider = local.provider
  name     = "deepseek/deepseek-r1"
  family   = "deepseek"
  seed     = var.sample_seed
}

model "gemini_2_0_flash_thinking_exp_free" {
  provider = local.provider
  name     = "google/gemini-2.0-flash-thinking-exp:free"
  family   = "google"
  seed     = var.sample_seed
}

model "gemini_2_0_pro_exp_02_05_free" {
  provider = local.provider
  name     = "google/gemini-2.0-pro-exp-02-05:free"
  family   = "google"
  seed     = var.sample_seed
}

model "qwen_max" {
  provider = local.provider
  name     = "qwen/qwen-max"
  family   = "qwen"
  seed     = var.sample_seed
}

model "deepseek_chat" {
  provider = local.provider
  name     = "deepseek/deepseek-chat"
  family   = "deepseek"
  seed     = var.sample_seed
}

model "claude_3_5_sonnet" {
  provider = local.provider
  name     = "anthropic/claude-3.5-sonnet"
  family   = "anthropic"
  seed     = var.sample_seed
}

locals {
  generators = [
    model.gemini_2_0_flash_exp_free,
    model.claude_3_7_sonnet,
    model.o1,
    model.o3_mini,
    model.o1_mini,
    model.step_2_16k_202411,
    model.gpt_4o_2024_11_20,
    model.deepseek_r1_distill_llama_70b,
    model.gemini_pro_1_5,
    model.grok_2_1212,
    model.gemini_2_0_flash_lite_001,
    model.qwen2_5_dracarys2_72b_q4_k_m,
    model.llama_3_1_405b_instruct,
    model.qwen_2_5_72b_instruct,
    model.gpt_4_turbo,
    model.llama_3_3_70b_instruct,
    model.claude_3_opus,
    model.mistral_large_2411,
    model.qwen_2_5_coder_32b_instruct,
    model.deepseek_r1_distill_qwen_32b,
    model.llama_3_1_70b_instruct,
    model.nova_pro_v1,
    model.claude_3_5_haiku_20241022,
    model.mistral_small_24b_instruct_2501,
    model.phi_4,
    model.gpt_4o_mini,
    model.qwq_32b_preview,
    model.nova_lite_v1,
    model.qwen_2_5_7b_instruct,
    model.mistral_small,
    model.gemma_2_27b_it,
    model.claude_3_7_sonnet_thinking,
    model.o3_mini_high,
    model.gpt_4_5_preview,
    model.qwq_32b,
    model.deepseek_r1,
    model.gemini_2_0_flash_thinking_exp_free,
    model.gemini_2_0_pro_exp_02_05_free,
    model.qwen_max,
    model.deepseek_chat,
    model.claude_3_5_sonnet,
  ]
  # CRITIC_MODELS of config.py: the judge panel.
  panel = [
    model.claude_3_7_sonnet_thinking,
    model.o3_mini_high,
    model.gpt_4_5_preview,
    model.qwq_32b,
    model.deepseek_r1,
    model.gemini_2_0_flash_thinking_exp_free,
    model.gemini_2_0_pro_exp_02_05_free,
    model.qwen_max,
    model.deepseek_chat,
    model.claude_3_5_sonnet,
  ]
}

dataset "keywords" {
  format     = "liveideabench-keywords"
  path       = var.keywords
  categories = var.categories
}

locals {
  parse = "strict" # ideaflow's parse; the reproduction reads the authors' parser's
}

# protocol v2 (the default): its idea prompt, REJECTION_PHRASES, the
# fallback prompt sent alone, the fallback's answer judged; the authors'
# length filters.
stage "generate_from_keyword" "ideas" {
  for_each          = { for m in local.generators : m.name => m }
  keywords          = dataset.keywords
  model             = each.value
  ideas_per_keyword = var.ideas_per_keyword
  # run.py asks qwq-32b-preview (not qwq-32b) for a "**Final Idea:**".
  final_idea   = each.key == "qwen/qwq-32b-preview"
  drop_refused = true
}

# ideaflow's panel: no judge of the generator's family, one draw per
# keyword and sample for every generator.
stage "judge_panel" "scores" {
  ideas           = stage.generate_from_keyword.ideas
  panel           = local.panel
  judges_per_idea = var.judges_per_idea
  seed            = var.panel_seed
  exclude         = "family"
  draw            = "shared"
}

stage "fluency" "pairs" {
  ideas   = stage.generate_from_keyword.ideas
  panel   = local.panel
  exclude = "family"
  draw    = "shared"
  seed    = var.panel_seed
}

stage "liveideabench_score" "originality" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "originality"
  parse      = local.parse
}

stage "liveideabench_score" "feasibility" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "feasibility"
  parse      = local.parse
}

stage "liveideabench_score" "clarity" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "clarity"
  parse      = local.parse
}

stage "liveideabench_score" "fluency" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "fluency"
  parse      = local.parse
}

stage "liveideabench_score" "flexibility" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "flexibility"
  parse      = local.parse
}

stage "liveideabench_score" "average" {
  ideas      = stage.generate_from_keyword.ideas
  judgements = stage.judge_panel.scores
  fluency    = stage.fluency.pairs
  metric     = "average"
  parse      = local.parse
}

stage "leaderboard" "v2" {
  ideas      = [stage.generate_from_keyword.ideas]
  judgements = [stage.judge_panel.scores]
  fluency    = [stage.fluency.pairs]
  parse      = local.parse
  title      = "LiveIdeaBench, current (v2) protocol, ideaflow's refusals, panel and parse (ablation)"
}

report "leaderboard" {
  title = "LiveIdeaBench leaderboard: each model's fluency, feasibility, originality, clarity, flexibility and average, ranked by average (as the authors' board)"
  rows  = stage.generate_from_keyword.ideas
  # The published board's columns, in its order.
  columns = [stage.liveideabench_score.fluency, stage.liveideabench_score.feasibility, stage.liveideabench_score.originality, stage.liveideabench_score.clarity, stage.liveideabench_score.flexibility, stage.liveideabench_score.average]
  sort_by = "liveideabench_score.average"
  labels = {
    model                                = "Model"
    "liveideabench_score.fluency"      = "Fluency"
    "liveideabench_score.feasibility"  = "Feasibility"
    "liveideabench_score.originality"  = "Originality"
    "liveideabench_score.clarity"      = "Clarity"
    "liveideabench_score.flexibility"  = "Flexibility"
    "liveideabench_score.average"      = "Average"
  }
  better = {
    "liveideabench_score.fluency"      = "higher"
    "liveideabench_score.feasibility"  = "higher"
    "liveideabench_score.originality"  = "higher"
    "liveideabench_score.clarity"      = "higher"
    "liveideabench_score.flexibility"  = "higher"
    "liveideabench_score.average"      = "higher"
  }
  row_dims = ["model"]
  # In brackets each value's 95% bootstrap interval over the model's
  # keywords, as liveideabench_score computes it: a drawn keyword brings
  # all its judgements and fluency pairs and the value is recomputed from
  # them (the LiveIdeaBench paper's figure has 95% CIs). Five measures with
  # intervals: the page width (table*), as IdeaBench's Table 1; in one
  # column it would be scaled down.
  width = "\\textwidth"
  formats   = ["markdown", "csv", "latex"]
}

stage "plot" "pareto" {
  kind    = "scatter"
  data    = [stage.liveideabench_score.originality]
  y       = [stage.liveideabench_score.feasibility]
  size    = [stage.liveideabench_score.fluency]
  color   = [stage.liveideabench_score.flexibility]
  title   = "Originality vs feasibility (size: fluency; colour: flexibility)"
  size_label  = "fluency"
  color_label = "flexibility"
  x_label = "originality"
  y_label = "feasibility"
  intervals = true # 95% bootstrap intervals as error bars where the value is a mean or percentile over items
}

stage "plot" "domains" {
  kind    = "heatmap"
  data    = [stage.liveideabench_score.originality]
  value   = "domain=*"
  series  = "key"
  title   = "Originality by domain"
  x_label = "domain"
  y_label = "model"
  intervals = true # 95% bootstrap intervals as error bars where the value is a mean or percentile over items
}
