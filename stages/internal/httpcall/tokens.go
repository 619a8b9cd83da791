package httpcall

import "time"

// tokenWindow is the span tokens_per_minute is counted over.
const tokenWindow = time.Minute

// tokenLateSlack is how late a start may go and still count from when it was
// due, whatever its spacing. Starts of small requests under a large budget
// are a few ms apart, a quarter of which (lateWake) is less than a wake's
// lateness on a loaded 2-core machine (5-20 ms at load average 30): there
// 3-7% of the budget was lost. It admits at most 20 ms of budget early in
// any window; the ledger still bounds every minute.
const tokenLateSlack = 20 * time.Millisecond

// tokenBudget is tokens_per_minute: a ledger of the last minute's starts,
// which no start may push over the budget, and a pacer that spaces starts
// by what they are expected to use.
//
// A request takes its estimate (the prompt plus max_tokens, or a default
// completion when unset) before it is sent, and the server's reported usage
// settles it afterwards. Estimates run far above usage when max_tokens is
// unset (5x is common), so budget held by estimates must come back the
// moment usage is known, and a start waiting for budget must see it: a token
// bucket whose burst is one request, refunded into a full bucket and slept on
// by a pacer that was never woken, used 19-20% of the budget.
//
//   - The ledger is the guarantee. It holds every start of the last minute
//     with its charge: the estimate while the request is in flight, the
//     reported usage once settled. A start goes only if the charges of the
//     starts in (now-1min, now] plus its estimate fit in the budget, so as
//     long as no request uses more than its estimate, no 60 s window of
//     starts ever holds more than tokens_per_minute of reported usage.
//   - The pacer is the smoothing (GCRA: a theoretical arrival time, tat). A
//     start moves tat on by its predicted usage at the budget's rate, and
//     settling moves it by the difference between usage and prediction; a
//     start goes once tat is due. The prediction is the estimate scaled by
//     the ratio of usage to estimate among the last minute's settled
//     starts, so starts are spaced by what they really use, not by what they
//     might, and the budget is spent evenly instead of a minute's worth at
//     once. tat lags now by at most lateWake of a start's spacing (or
//     tokenLateSlack) when it goes: time with nothing to send is lost, not saved up into a burst.
//
// Settling wakes the attempt waiting for budget (Limiter.pace), which then
// recomputes its wait. l.mu of the owning Limiter guards every field.
type tokenBudget struct {
	base, rate float64 // tokens per second: configured, and scaled by the rate factor
	baseCap    float64 // tokens per window: configured
	cap        float64 // and scaled by the rate factor

	tat     time.Time
	entries []tokenEntry // the starts of the last window, oldest first
	first   uint64       // id of entries[0]; ids count every start
	sum     int64        // charges of entries

	settledEst, settledUsed int64   // of the settled entries
	ratio                   float64 // usage/estimate when no entry is settled: the last known, 1 at first
}

type tokenEntry struct {
	at      time.Time
	est     int64 // the estimate taken at the start
	charge  int64 // est while in flight, the reported usage once settled
	settled bool
}

func newTokenBudget(perMinute float64) *tokenBudget {
	return &tokenBudget{base: perMinute / tokenWindow.Seconds(), rate: perMinute / tokenWindow.Seconds(),
		baseCap: perMinute, cap: perMinute, ratio: 1}
}

func (b *tokenBudget) setFactor(f float64) {
	b.rate, b.cap = b.base*f, b.baseCap*f
}

// expire drops the starts that left the window (at <= now-window).
func (b *tokenBudget) expire(now time.Time) {
	i := 0
	for i < len(b.entries) && !b.entries[i].at.Add(tokenWindow).After(now) {
		e := b.entries[i]
		b.sum -= e.charge
		if e.settled {
			b.settledEst -= e.est
			b.settledUsed -= e.charge
		}
		i++
	}
	if i > 0 {
		// Reslice rather than copy down: append moves the live entries
		// when the array is full, so each entry is copied O(1) times
		// however many starts a minute holds.
		b.entries = b.entries[i:]
		b.first += uint64(i)
	}
}

// predict is the usage expected of a start that estimated n.
func (b *tokenBudget) predict(n int64) float64 {
	r := b.ratio
	if b.settledEst > 0 {
		r = float64(b.settledUsed) / float64(b.settledEst)
	}
	return float64(n) * r
}

// take starts a request estimated at n tokens at now if the ledger and the
// pacer allow it, returning 0, the start's id and its predicted usage;
// otherwise it takes nothing and returns how long until they may.
func (b *tokenBudget) take(now time.Time, n int64) (time.Duration, uint64, float64) {
	b.expire(now)
	delay := b.tat.Sub(now)
	if over := b.sum + n - int64(b.cap); over > 0 && b.sum > 0 {
		// Wait for enough of the oldest charges to leave the window (a
		// request larger than the whole budget goes into an empty one).
		var freed int64
		for _, e := range b.entries {
			freed += e.charge
			if freed >= over {
				delay = max(delay, e.at.Add(tokenWindow).Sub(now))
				break
			}
		}
	}
	if delay > paceSlack {
		return delay, 0, 0
	}
	id := b.first + uint64(len(b.entries))
	b.entries = append(b.entries, tokenEntry{at: now, est: n, charge: n})
	b.sum += n
	pred := b.predict(n)
	// A start a little late (timer and scheduler latency) is counted from
	// when it was due, as for requests_per_minute (see lateWake), or up to
	// tokenLateSlack late when that is more; later than that, the time is
	// lost.
	from := now
	if late := now.Sub(b.tat); late < 0 || (!b.tat.IsZero() && late <= max(b.seconds(lateWake*pred), tokenLateSlack)) {
		from = b.tat
	}
	b.tat = from.Add(b.seconds(pred))
	return 0, id, pred
}

// settle replaces the estimate of start id (which predicted pred) by the
// usage the server reported.
func (b *tokenBudget) settle(id uint64, est int64, pred float64, used int64) {
	b.tat = b.tat.Add(b.seconds(float64(used) - pred))
	if id < b.first || id >= b.first+uint64(len(b.entries)) {
		return // already out of the window
	}
	e := &b.entries[id-b.first]
	if e.settled {
		return
	}
	b.sum += used - e.charge
	e.charge, e.settled = used, true
	b.settledEst += est
	b.settledUsed += used
	b.ratio = float64(b.settledUsed) / float64(b.settledEst)
}

// seconds is how long n tokens take at the current rate.
func (b *tokenBudget) seconds(n float64) time.Duration {
	return time.Duration(n / b.rate * float64(time.Second))
}
