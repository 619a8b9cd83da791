package adaptive

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ideaflow/ideaflow/stages/stats"
)

// The LiveIdeaBench leaderboard's shape (experiments/liveideabench/
// leaderboard_v2.hcl): 41 models, 1,180 keywords, per keyword and model 2
// ideas, each judged by 3 judges (6 judgements), and 1 fluency pair: 9
// calls. A keyword is an item.
const (
	libModels        = 41
	libKeywords      = 1180
	callsPerItem     = 9
	ideasPerItem     = 2
	judgesPerIdea    = 3
	scoreLo, scoreHi = 1.0, 10.0
)

// world is a scripted benchmark: each model's true mean quality; an idea
// of model m has quality mu[m] + N(0, ideaSD), each judge scores it
// round(quality + N(0, judgeSD)) clamped to 1..10; an item's score is the
// mean of its judgements.
type world struct {
	name            string
	mu              []float64
	ideaSD, judgeSD float64
	items           int
}

// draw scores every item of one repetition: scores[i][m].
func (w world) draw(seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 0x1dea))
	out := make([][]float64, w.items)
	for i := range out {
		row := make([]float64, len(w.mu))
		for m, mu := range w.mu {
			var s float64
			for k := 0; k < ideasPerItem; k++ {
				q := mu + w.ideaSD*r.NormFloat64()
				for j := 0; j < judgesPerIdea; j++ {
					s += math.Min(scoreHi, math.Max(scoreLo, math.Round(q+w.judgeSD*r.NormFloat64())))
				}
			}
			row[m] = s / (ideasPerItem * judgesPerIdea)
		}
		out[i] = row
	}
	return out
}

// fullSeparated is the full run's answer: the pairs whose fixed-n normal
// intervals over every item are disjoint at the board's level (95% over
// all models at once), ordered as Decide orders them. Written apart from
// Board.fixedN so the two are checked against each other.
func fullSeparated(scores [][]float64, level float64) []Pair {
	k, n := len(scores[0]), float64(len(scores))
	lo, hi := make([]float64, k), make([]float64, k)
	for m := 0; m < k; m++ {
		var s, ss float64
		for _, row := range scores {
			s += row[m]
			ss += row[m] * row[m]
		}
		mean := s / n
		h := FullZ(level, k) * math.Sqrt(math.Max(ss/n-mean*mean, 0)*n/(n-1)/n)
		lo[m], hi[m] = mean-h, mean+h
	}
	var out []Pair
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			switch {
			case lo[i] > hi[j]:
				out = append(out, Pair{i, j})
			case lo[j] > hi[i]:
				out = append(out, Pair{j, i})
			}
		}
	}
	slices.SortFunc(out, func(p, q Pair) int {
		if p.Higher != q.Higher {
			return p.Higher - q.Higher
		}
		return p.Lower - q.Lower
	})
	return out
}

type outcome struct {
	items, rounds int
	reason        string
	separated     []Pair
}

// adaptiveRun takes the items in order (the draw is already in a seeded
// random order), round by round, until the rule stops.
func adaptiveRun(t testing.TB, rule Rule, scores [][]float64) outcome {
	b, err := NewBoard(rule, len(scores[0]), len(scores))
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; ; r++ {
		for b.Items() < Rounds(r, rule.Round, len(scores)) {
			if err := b.Add(scores[b.Items()]); err != nil {
				t.Fatal(err)
			}
		}
		d := b.Decide(b.Items() * len(scores[0]) * callsPerItem)
		if d.Stop {
			return outcome{items: b.Items(), rounds: r, reason: d.Reason, separated: d.Separated}
		}
	}
}

// spread is n models evenly spaced from lo to hi.
func spread(n int, lo, hi float64) []float64 {
	mu := make([]float64, n)
	for i := range mu {
		mu[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return mu
}

// tiers is n models in len(levels) tiers, round-robin.
func tiers(n int, levels ...float64) []float64 {
	mu := make([]float64, n)
	for i := range mu {
		mu[i] = levels[i%len(levels)]
	}
	return mu
}

type measured struct {
	share        float64 // mean calls used / full run's calls
	errors, reps int
	meanRounds   float64
	reasons      map[string]int
}

func measure(t testing.TB, w world, rule Rule, reps int) measured {
	out := measured{reps: reps, reasons: map[string]int{}}
	var used float64
	for rep := 0; rep < reps; rep++ {
		scores := w.draw(uint64(rep))
		full := fullSeparated(scores, rule.Level())
		got := adaptiveRun(t, rule, scores)
		used += float64(got.items) / float64(len(scores))
		out.meanRounds += float64(got.rounds)
		out.reasons[got.reason]++
		if !slices.Equal(got.separated, full) {
			out.errors++
		}
	}
	out.share = used / float64(reps)
	out.meanRounds /= float64(reps)
	return out
}

var testRule = Rule{Separated: 0.95, Round: 20, Lo: scoreLo, Hi: scoreHi, Method: stats.CSBernstein}

// tiered is the scripted LiveIdeaBench board of the measurement: the 41
// models in five tiers of true quality one point apart (4.5 ... 8.5; 8 or
// 9 models tied within a tier), ideas around their model's quality with
// sd 1, judges adding sd 1 each. The full run separates every pair across
// tiers and none within (at 95% over the board).
var tiered = world{name: "tiers", mu: tiers(libModels, 4.5, 5.5, 6.5, 7.5, 8.5), ideaSD: 1, judgeSD: 1, items: libKeywords}

// tieredRule is stop_when { separated = 0.95, tie = 0.75, round = 20,
// method = "betting" }.
var tieredRule = Rule{Separated: 0.95, Tie: 0.75, Round: 20, Lo: scoreLo, Hi: scoreHi, Method: stats.CSBetting, Grid: 450}

// TestLeaderboardShareOfCalls is the measurement: on the
// LiveIdeaBench leaderboard's shape with scripted judges, the calls the
// adaptive rule needs to reproduce the full run's separated pairs, as a
// share of the full run's calls, and how often it gets them wrong, over
// 200 seeded repetitions (20 under -race or -short: the figure is
// measured without, and the bounds hold for the prefix too). Seeds are
// fixed, so the counts are fixed: the tolerance is for readers, not for
// flakes.
func TestLeaderboardShareOfCalls(t *testing.T) {
	reps := 200
	if testing.Short() || raceEnabled {
		reps = 20
	}
	m := measure(t, tiered, tieredRule, reps)
	t.Logf("share of calls %.3f, wrong %d/%d, mean rounds %.1f, reasons %v", m.share, m.errors, m.reps, m.meanRounds, m.reasons)
	if m.share > 0.30 {
		t.Errorf("share of calls %.3f; want <= 0.30", m.share)
	}
	if rate := float64(m.errors) / float64(m.reps); rate > 1-tieredRule.Level()+0.02 {
		t.Errorf("wrong on %d/%d repetitions; want at most the stated 5%% (+0.02)", m.errors, m.reps)
	}
	if m.reasons["separated"] != reps {
		t.Errorf("reasons %v; want every repetition stopped by separated", m.reasons)
	}
}

// TestStopIsDeterministic pins one seed's stopping round and answer.
func TestStopIsDeterministic(t *testing.T) {
	scores := tiered.draw(7)
	got := adaptiveRun(t, tieredRule, scores)
	again := adaptiveRun(t, tieredRule, scores)
	if got.rounds != again.rounds || !slices.Equal(got.separated, again.separated) {
		t.Fatalf("two runs of seed 7 differ: %d vs %d rounds", got.rounds, again.rounds)
	}
	full := fullSeparated(scores, tieredRule.Level())
	// 41 models in tiers of 9, 8, 8, 8, 8: pairs across tiers
	// = (41*40 - 9*8 - 4*8*7) / 2 = 672.
	if got.rounds != wantRoundsSeed7 || got.items != wantRoundsSeed7*20 || got.reason != "separated" || len(got.separated) != 672 || !slices.Equal(got.separated, full) {
		t.Errorf("seed 7: %d rounds, %d items, %q, %d separated (same as full: %v); want %d rounds, separated, 672 as the full run",
			got.rounds, got.items, got.reason, len(got.separated), slices.Equal(got.separated, full), wantRoundsSeed7)
	}
}

const wantRoundsSeed7 = 14

// TestSpreadBoardRunsToTheEnd is the board the rule cannot shorten: 41
// models evenly spread over 4.5..8 (0.0875 apart), where neighbours are
// neither separable nor within any useful tie zone before the last item.
// The rule then runs to the end and its answer is the full run's.
func TestSpreadBoardRunsToTheEnd(t *testing.T) {
	w := world{name: "spread", mu: spread(libModels, 4.5, 8.0), ideaSD: 1, judgeSD: 1, items: libKeywords}
	r := testRule
	r.Tie = 0.5
	m := measure(t, w, r, 10)
	t.Logf("spread: share %.3f, wrong %d/%d, reasons %v", m.share, m.errors, m.reps, m.reasons)
	if m.share != 1 || m.errors != 0 || m.reasons["exhausted"] != 10 {
		t.Errorf("spread board: share %.3f, wrong %d, reasons %v; want 1, 0, all exhausted", m.share, m.errors, m.reasons)
	}
}
