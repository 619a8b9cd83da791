package executor

// Usage is what a call cost. It has the fields, in order, of cache.Usage,
// which stores it in a record: the engine converts one to the other
// (cache.Usage(u)), so this package need not import the cache (and Badger).
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	LatencyMS    int64   `json:"latency_ms"`
	Attempts     int     `json:"attempts"`
	// CachedTokens is the part of InputTokens the provider served from its
	// prompt cache, priced at the cached-input rate (stages/pricing).
	CachedTokens int64 `json:"cached_tokens,omitempty"`
}

// Attempt is one completion asked for (a repair re-ask included), as
// cache.Attempt stores it.
type Attempt struct {
	Error    string `json:"error,omitempty"`
	Raw      string `json:"raw,omitempty"`
	Status   int    `json:"status,omitempty"`
	Repair   bool   `json:"repair,omitempty"`
	Duration int64  `json:"duration_ms,omitempty"`
}
