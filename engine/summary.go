package engine

import (
	"sort"
)

// Counts are node counts of a run, overall or for one stage instance.
type Counts struct {
	Total   int `json:"total"`
	Cached  int `json:"cached"`
	Ran     int `json:"ran"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// StageSummary is one stage instance's line of a run summary.
type StageSummary struct {
	Counts
	LLMCalls int     `json:"llm_calls,omitempty"`
	Tokens   *Tokens `json:"tokens,omitempty"`
	CostUSD  float64 `json:"cost_usd,omitempty"`
}

// Tokens are token totals.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// ModelUsage is what one model cost in a run.
type ModelUsage struct {
	Calls   int     `json:"calls"`
	Tokens  Tokens  `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// FailedNode is one failure, for the summary.
type FailedNode struct {
	Address string `json:"address"`
	Error   string `json:"error"`
}

// Summary is the result of a run (`run --summary-json`).
type Summary struct {
	Nodes    Counts                  `json:"nodes"`
	LLMCalls int                     `json:"llm_calls"`
	Tokens   Tokens                  `json:"tokens"`
	CostUSD  float64                 `json:"cost_usd"`
	Stages   map[string]StageSummary `json:"stages"`
	Models   map[string]ModelUsage   `json:"models,omitempty"`
	// ServedModels counts, per requested model name, the model names the
	// endpoint said answered (cached and new answers alike). More than one
	// name, or a name other than the requested one, means the endpoint
	// re-routed: cached answers may come from another model than new ones.
	ServedModels    map[string]map[string]int `json:"served_models,omitempty"`
	Failures        []FailedNode              `json:"failures,omitempty"`
	Skipped         map[string]int            `json:"skipped_reasons,omitempty"`
	Interrupted     bool                      `json:"interrupted,omitempty"`
	BudgetExhausted bool                      `json:"budget_exhausted,omitempty"`
	Synthetic       bool                      `json:"synthetic,omitempty"`
	Reports         []string                  `json:"reports,omitempty"`
	WallSeconds     float64                   `json:"wall_seconds"`
}

// PlanCounts are per-stage plan counts.
type PlanCounts struct {
	Total   int            `json:"total"`
	Cached  int            `json:"cached"`
	ToRun   int            `json:"to_run"`
	Reasons map[string]int `json:"reasons,omitempty"`
	// ServedModels lists, for cached model nodes, served model names that differ
	// from the requested name (the endpoint answered with another model).
	ServedModels map[string]int `json:"served_models,omitempty"`
	// Estimate covers this stage's model nodes that must run.
	Estimate *Estimate `json:"estimate,omitempty"`
}

// Estimate is a plan's estimate of the calls still to make.
type Estimate struct {
	LLMCalls     int     `json:"llm_calls"`
	TokensInput  int64   `json:"tokens_input"`
	TokensOutput int64   `json:"tokens_output"`
	CostUSD      float64 `json:"cost_usd"`
}

// PlanSummary is `plan --json`.
type PlanSummary struct {
	Nodes struct {
		Total  int `json:"total"`
		Cached int `json:"cached"`
		ToRun  int `json:"to_run"`
	} `json:"nodes"`
	Estimate Estimate              `json:"estimate"`
	Stages   map[string]PlanCounts `json:"stages"`
	// Order lists stage addresses in DAG order, for printing.
	Order []string `json:"-"`
}

func (w *walker) summarize() *Summary {
	s := &Summary{Stages: map[string]StageSummary{}, Models: map[string]ModelUsage{}, Skipped: map[string]int{},
		ServedModels: map[string]map[string]int{}}
	for i, n := range w.g.Nodes {
		if n.Inst.source {
			continue
		}
		st := &w.states[i]
		c := s.Stages[n.Inst.Address]
		c.Total++
		s.Nodes.Total++
		switch st.status {
		case StatusCached:
			c.Cached++
			s.Nodes.Cached++
		case StatusRan:
			c.Ran++
			s.Nodes.Ran++
			if st.isCall {
				calls := st.usage.Attempts
				if calls == 0 {
					calls = 1
				}
				s.LLMCalls += calls
				s.Tokens.Input += st.usage.InputTokens
				s.Tokens.Output += st.usage.OutputTokens
				s.CostUSD += st.usage.CostUSD
				c.LLMCalls += calls
				if c.Tokens == nil {
					c.Tokens = &Tokens{}
				}
				c.Tokens.Input += st.usage.InputTokens
				c.Tokens.Output += st.usage.OutputTokens
				c.CostUSD += st.usage.CostUSD
				mu := s.Models[st.wantModel]
				mu.Calls += calls
				mu.Tokens.Input += st.usage.InputTokens
				mu.Tokens.Output += st.usage.OutputTokens
				mu.CostUSD += st.usage.CostUSD
				s.Models[st.wantModel] = mu
			}
		case StatusFailed:
			c.Failed++
			s.Nodes.Failed++
			s.Failures = append(s.Failures, FailedNode{Address: n.Address, Error: st.reason})
		case StatusSkipped, StatusPending:
			c.Skipped++
			s.Nodes.Skipped++
			s.Skipped[skipClass(st.reason)]++
		}
		if st.isCall && st.known && st.servedModel != "" {
			m := s.ServedModels[st.wantModel]
			if m == nil {
				m = map[string]int{}
				s.ServedModels[st.wantModel] = m
			}
			m[st.servedModel]++
		}
		s.Stages[n.Inst.Address] = c
	}
	sort.Slice(s.Failures, func(i, j int) bool { return s.Failures[i].Address < s.Failures[j].Address })
	if len(s.Skipped) == 0 {
		s.Skipped = nil
	}
	if len(s.Models) == 0 {
		s.Models = nil
	}
	if len(s.ServedModels) == 0 {
		s.ServedModels = nil
	}
	return s
}

func skipClass(reason string) string {
	switch {
	case reason == "":
		return "not reached"
	case len(reason) > 5 && reason[:5] == "input":
		return "input failed or skipped"
	default:
		return reason
	}
}

func (w *walker) planSummary() *PlanSummary {
	p := &PlanSummary{Stages: map[string]PlanCounts{}, Order: w.g.StageOrder()}
	for i, n := range w.g.Nodes {
		if n.Inst.source {
			continue
		}
		st := &w.states[i]
		c := p.Stages[n.Inst.Address]
		c.Total++
		p.Nodes.Total++
		switch st.status {
		case StatusCached:
			c.Cached++
			p.Nodes.Cached++
			if st.isCall && st.servedModel != "" && st.servedModel != st.wantModel {
				if c.ServedModels == nil {
					c.ServedModels = map[string]int{}
				}
				c.ServedModels[st.servedModel]++
			}
		default:
			c.ToRun++
			p.Nodes.ToRun++
			if c.Reasons == nil {
				c.Reasons = map[string]int{}
			}
			c.Reasons[st.reason]++
			if st.isCall {
				if c.Estimate == nil {
					c.Estimate = &Estimate{}
				}
				for _, e := range []*Estimate{&p.Estimate, c.Estimate} {
					e.LLMCalls++
					e.TokensInput += st.estIn
					e.TokensOutput += st.estOut
					e.CostUSD += st.estCost
				}
			}
		}
		p.Stages[n.Inst.Address] = c
	}
	return p
}
