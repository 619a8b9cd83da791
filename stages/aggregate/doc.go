// Package aggregate holds the stages that summarise per-item scores with
// honest uncertainty: aggregate (a mean, median or percentile over items),
// bootstrap (that statistic with a bootstrap confidence interval), compare
// (paired bootstrap differences between models scored on the same items)
// and agreement (Krippendorff's alpha, Cohen's kappa and Kendall's tau-b
// between judges, or between permutations of one judge). The statistics
// themselves live in stages/stats; these stages only read upstream outputs
// into the shapes stats takes and write the results where reports read them.
//
// # What the stages read
//
// Every stage reads "one number per item" from an upstream instance in one
// of two ways (see readItems):
//
//   - an aggregate upstream (one node without an item, e.g. insight_score,
//     similarity_score, overlap_score, or this package's own stages) whose
//     output is a stages.Score: its PerItem map;
//   - a per-item upstream (rank_ideas, a judge panel, ...): the number at
//     value_field (a dotted path into each node's JSON output, e.g.
//     "target_rank" or "scores.originality"); an item with several nodes
//     (samples, permutations) gets the mean of its nodes. A node whose
//     output has "dropped": true drops its item; a node that failed or was
//     skipped makes its item missing. Both are counted, never scored.
//
// value_field defaults per known upstream type (DefaultFields); for any
// other per-item stage it must be given.
package aggregate

import "github.com/ideaflow/ideaflow/stages"

func init() {
	stages.Register(aggregateType{})
	stages.Register(bootstrapType{})
	stages.Register(compareType{})
	stages.Register(agreementType{})
}
