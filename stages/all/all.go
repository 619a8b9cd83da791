// Package all links every stage type into a binary: importing it runs each
// stage package's init, which registers its types with the stages registry.
package all

import (
	_ "github.com/ideaflow/ideaflow/stages/ideabench"     // filter_references, generate_ideas, rank_ideas, insight_score
	_ "github.com/ideaflow/ideaflow/stages/liveideabench" // generate_from_keyword, judge_panel, fluency, liveideabench_score, leaderboard
	_ "github.com/ideaflow/ideaflow/stages/report"        // report
)
