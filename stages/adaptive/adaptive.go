// Package adaptive is the stop rule of an adaptive evaluation: items are
// taken in a seeded random order in rounds, each model's mean score is
// followed by an anytime-valid confidence sequence (stats.NewConfSeq),
// and after each round Decide says whether the board's answer is known.
//
// The rule is pure: it sees per-item scores, never the engine. An
// experiment's stop_when block (engine/config) is turned into a Rule; the
// engine runs a round, hands the new items' scores to a Board and asks it.
package adaptive

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/ideaflow/ideaflow/stages/stats"
)

// Rule is what a stop_when block says. Every condition set is a reason to
// stop: the first met stops.
type Rule struct {
	// Separated is the confidence level (in (0, 1), e.g. 0.95) at which
	// the board must be settled: every pair of models separated (their
	// intervals disjoint) or tied (see Tie, Board.Decide). 0: no such
	// condition.
	Separated float64
	// Tie is the indifference zone: a pair whose intervals allow no
	// difference of means as large as Tie is settled as tied. 0: a pair
	// is settled only by separating, so a true tie keeps the run going to
	// the end.
	Tie float64
	// HalfWidth stops once every model's interval has a half-width below
	// it (on the scores' scale). 0: no such condition.
	HalfWidth float64
	// MaxCalls stops once the calls spent reach it. 0: no budget.
	MaxCalls int
	// Round is the number of items added per round (> 0).
	Round int
	// Lo and Hi bound a score (LiveIdeaBench: 1 and 10).
	Lo, Hi float64
	// Method is the confidence sequence (stats.CSBernstein by default).
	Method stats.CSMethod
	// Grid is the betting CS's grid (0: stats.DefaultCSGrid).
	Grid int
}

// DefaultLevel is the intervals' confidence level when only half_width or
// a budget is set.
const DefaultLevel = 0.95

// Level is the rule's simultaneous confidence level over all models.
func (r Rule) Level() float64 {
	if r.Separated > 0 {
		return r.Separated
	}
	return DefaultLevel
}

// Check says what is wrong with r, if anything.
func (r Rule) Check() error {
	switch {
	case r.Round <= 0:
		return errors.New("round must be a positive number of items")
	case r.Separated != 0 && !(r.Separated > 0 && r.Separated < 1):
		return fmt.Errorf("separated = %v must be a confidence level in (0, 1), e.g. 0.95", r.Separated)
	case r.HalfWidth < 0 || math.IsNaN(r.HalfWidth):
		return fmt.Errorf("half_width = %v must be positive", r.HalfWidth)
	case r.Tie < 0 || math.IsNaN(r.Tie):
		return fmt.Errorf("tie = %v must be positive", r.Tie)
	case r.MaxCalls < 0:
		return fmt.Errorf("max_calls = %d must be positive", r.MaxCalls)
	case !(r.Lo < r.Hi):
		return fmt.Errorf("score bounds [%v, %v] need lo < hi", r.Lo, r.Hi)
	case r.Separated == 0 && r.HalfWidth == 0 && r.MaxCalls == 0:
		return errors.New("no condition: set separated, half_width or max_calls")
	}
	return nil
}

// Board follows the models' means as items are added.
type Board struct {
	rule  Rule
	total int // the full run's items: what "the full run" would see
	cs    []stats.ConfSeq
	sum   []float64
	sumSq []float64
	n     int
}

// NewBoard starts a board of models models over a full run of total items.
// Each model's sequence is at miscoverage (1-level)/models (Bonferroni),
// so all of them hold at once with probability level: the stated error
// rate is the board's, not one model's.
func NewBoard(rule Rule, models, total int) (*Board, error) {
	if err := rule.Check(); err != nil {
		return nil, err
	}
	if models < 1 {
		return nil, errors.New("adaptive: a board needs at least one model")
	}
	alpha := (1 - rule.Level()) / float64(models)
	b := &Board{rule: rule, total: total, cs: make([]stats.ConfSeq, models),
		sum: make([]float64, models), sumSq: make([]float64, models)}
	for m := range b.cs {
		cs, err := stats.NewConfSeq(rule.Method, rule.Lo, rule.Hi, alpha, rule.Grid)
		if err != nil {
			return nil, fmt.Errorf("adaptive: %w", err)
		}
		b.cs[m] = cs
	}
	return b, nil
}

// Add feeds one item: scores[m] is model m's score on it.
func (b *Board) Add(scores []float64) error {
	if len(scores) != len(b.cs) {
		return fmt.Errorf("adaptive: %d scores for %d models", len(scores), len(b.cs))
	}
	for m, x := range scores {
		if err := b.cs[m].Add(x); err != nil {
			return fmt.Errorf("adaptive: model %d, item %d: %w", m, b.n+1, err)
		}
		b.sum[m] += x
		b.sumSq[m] += x * x
	}
	b.n++
	return nil
}

// Items is the number of items added.
func (b *Board) Items() int { return b.n }

// Pair is an ordered pair of models: Higher's interval lies wholly above
// Lower's.
type Pair struct{ Higher, Lower int }

// Decision is the board after a round.
type Decision struct {
	Stop   bool
	Reason string // "separated", "half_width", "max_calls", "exhausted", or "" going on
	// Intervals are the models' confidence sequences now.
	Intervals []stats.Interval
	// Separated lists the pairs whose intervals are disjoint, sorted.
	Separated []Pair
	// Tied lists the pairs settled as within Rule.Tie of each other.
	Tied []Pair
	// Open counts the pairs neither separated nor tied.
	Open int
}

// FullZ is the normal quantile of the full run's fixed-n intervals at
// the board's level, Bonferroni over its models like the sequences: the
// full run's answer is stated at the same error rate as the adaptive one.
func FullZ(level float64, models int) float64 {
	return math.Sqrt2 * math.Erfinv(1-(1-level)/float64(models))
}

// Decide reads the board after calls calls. A pair is settled when its
// intervals are disjoint (separated: the full run, whose intervals are
// narrower, will find the same order), or, with Rule.Tie set, when every
// difference of means the two intervals allow is within Tie (tied: the
// pair is inside the indifference zone, and no ordering is claimed).
// Separated stops once every pair is settled.
//
// Once every item is in (Items() == total) the board is the full run's:
// Separated then lists the pairs whose fixed-n 95% normal intervals are
// disjoint at the board's level (FullZ), the full run's own answer.
func (b *Board) Decide(calls int) Decision {
	k := len(b.cs)
	d := Decision{Intervals: make([]stats.Interval, k)}
	for m, cs := range b.cs {
		lo, hi, _ := cs.Interval()
		d.Intervals[m] = stats.Interval{Estimate: (lo + hi) / 2, Lower: lo, Upper: hi, Level: b.rule.Level()}
	}
	ivs := d.Intervals
	if b.n >= b.total && b.n > 1 {
		ivs = b.fixedN()
	}
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			a, c := ivs[i], ivs[j]
			switch {
			case a.Lower > c.Upper:
				d.Separated = append(d.Separated, Pair{i, j})
			case c.Lower > a.Upper:
				d.Separated = append(d.Separated, Pair{j, i})
			case b.rule.Tie > 0 && a.Upper-c.Lower < b.rule.Tie && c.Upper-a.Lower < b.rule.Tie:
				d.Tied = append(d.Tied, Pair{i, j})
			default:
				d.Open++
			}
		}
	}
	sort.Slice(d.Separated, func(x, y int) bool {
		p, q := d.Separated[x], d.Separated[y]
		return p.Higher < q.Higher || p.Higher == q.Higher && p.Lower < q.Lower
	})
	switch {
	case b.n >= b.total:
		d.Stop, d.Reason = true, "exhausted"
	case b.rule.Separated > 0 && d.Open == 0 && b.n > 0:
		d.Stop, d.Reason = true, "separated"
	case b.rule.HalfWidth > 0 && b.n > 0 && maxHalf(d.Intervals) < b.rule.HalfWidth:
		d.Stop, d.Reason = true, "half_width"
	case b.rule.MaxCalls > 0 && calls >= b.rule.MaxCalls:
		d.Stop, d.Reason = true, "max_calls"
	}
	return d
}

// fixedN is each model's fixed-n normal interval over the items in, at
// the board's level.
func (b *Board) fixedN() []stats.Interval {
	out := make([]stats.Interval, len(b.cs))
	n := float64(b.n)
	z := FullZ(b.rule.Level(), len(b.cs))
	for m := range out {
		mean := b.sum[m] / n
		h := z * math.Sqrt(math.Max(b.sumSq[m]/n-mean*mean, 0)/(n-1))
		out[m] = stats.Interval{Estimate: mean, Lower: mean - h, Upper: mean + h, Level: b.rule.Level()}
	}
	return out
}

func maxHalf(ivs []stats.Interval) float64 {
	var h float64
	for _, iv := range ivs {
		h = math.Max(h, (iv.Upper-iv.Lower)/2)
	}
	return h
}

// Rounds is the number of items after round r (1-based) of a run of total
// items: min(r*round, total).
func Rounds(r, round, total int) int { return min(r*round, total) }
