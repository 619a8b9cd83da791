// Package all links every stage type into a binary: importing it runs each
// stage package's init, which registers its types with the stages registry.
package all

import (
	_ "github.com/ideaflow/ideaflow/stages/aggregate"     // aggregate, bootstrap, compare, agreement
	_ "github.com/ideaflow/ideaflow/stages/expect"        // expect: a published number beside the computed one (ideaflow check)
	_ "github.com/ideaflow/ideaflow/stages/ideabench"     // filter_references, generate_ideas, rank_ideas, insight_score, ...
	_ "github.com/ideaflow/ideaflow/stages/literature"    // provider kinds corpus and semantic_scholar, the mock's literature operations, the dataset builder's stages
	_ "github.com/ideaflow/ideaflow/stages/liveideabench" // generate_from_keyword, judge_panel, fluency, liveideabench_score, leaderboard
	_ "github.com/ideaflow/ideaflow/stages/mix"           // cross_agreement: the three benchmarks' evaluators on the same ideas
	_ "github.com/ideaflow/ideaflow/stages/report"        // report, plot
	_ "github.com/ideaflow/ideaflow/stages/scholareval"   // soundness_*, contribution_*, literature_search, llm_review, resolve_references, reference_validity, coverage, coverage_score
)
