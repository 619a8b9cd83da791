package liveideabench

import (
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// LiveIdeaBench has had two releases, and the published numbers come from
// both: the December 2024 leaderboard of the paper (the first release,
// utils/prompts.yaml and utils/LLM.py at x66ccff/liveideabench@8dbdfef)
// and the current leaderboard (utils/prompts.json, utils/LLM.py, run.py
// and hash.py at 6fc8285). A stage's protocol param names the release
// whose protocol it follows; it picks the defaults that differ between
// them:
//
//	                      v1 (December 2024)                   v2 (current)
//	idea prompt           "within 100 words", "novel,          "concisely expressed within 100 words
//	                      verifiable, practically valuable"    total", "original, feasible, clearly articulated"
//	refusals              none detected, the answer judged     REJECTION_PHRASES; the fallback prompt sent
//	                                                           once as a request of its own, its answer judged
//	Final Idea (QwQ)      "\nYou MUST give your answer ..."     "\n\nYou MUST give your answer ..."
//	judge system prompt   two dimensions, "SCORES = {...}",    three dimensions, a brief analysis,
//	                      "no need to explain the reason"      then a ```json block
//	judge user message    "... and give your scores            "Please evaluate the following
//	                      directly:\n\n" + idea                scientific idea:\n\n" + idea
//	dimensions            originality, feasibility             originality, feasibility, clarity
//	fluency prompt        "Are these two ideas ... the same?"  "Evaluate the similarity ..."
//	authors' score parse  parse_critique @ 8dbdfef             parse_critique @ 6fc8285
//
// A text param (prompt, system_prompt) or list param (dimensions,
// refusal_phrases) left at its declared default takes the protocol's
// value; one you set yourself is used as written, whatever the protocol
// (a list even when it equals the default; a text equal to the declared
// default counts as left at it). The declared defaults are v2's, so
// `ideaflow doc` shows the current texts.
type release struct {
	name string
	// generate_from_keyword
	ideaPrompt     string
	refusalPhrases []string // empty: no detection
	finalIdeaSep   string   // between the prompt and finalIdeaInstruction
	// judge_panel
	judgeSystem, judgeUser string
	definitions            map[string]string
	dimensions             []string
	scoresParser           string
	parseScores            func(text string, fields []string) format.CompatScores
	// fluency
	fluencyPrompt string
	letterParser  string
}

var releases = map[string]*release{
	"v1": {
		name:           "v1",
		ideaPrompt:     IdeaPromptV1,
		refusalPhrases: []string{},
		finalIdeaSep:   "\n",
		judgeSystem:    JudgeSystemPromptV1,
		judgeUser:      JudgePromptV1,
		definitions:    DefinitionsV1,
		dimensions:     []string{"originality", "feasibility"},
		scoresParser:   format.ParserLiveIdeaBenchScoresV1,
		parseScores:    format.LiveIdeaBenchScoresV1,
		fluencyPrompt:  FluencyPromptV1,
		letterParser:   format.ParserLiveIdeaBenchLetterV1,
	},
	"v2": {
		name:           "v2",
		ideaPrompt:     DefaultIdeaPrompt,
		refusalPhrases: DefaultRefusalPhrases,
		finalIdeaSep:   "\n\n",
		judgeSystem:    DefaultJudgeSystemPrompt,
		judgeUser:      DefaultJudgePrompt,
		definitions:    DefaultDefinitions,
		dimensions:     defaultDimensions,
		scoresParser:   format.ParserLiveIdeaBenchScoresV2,
		parseScores:    func(text string, _ []string) format.CompatScores { return format.LiveIdeaBenchScoresV2(text) },
		fluencyPrompt:  DefaultFluencyPrompt,
		letterParser:   format.ParserLiveIdeaBenchLetterV2,
	},
}

var defaultDimensions = []string{"originality", "feasibility", "clarity"}

// protocolParam is the protocol param of generate_from_keyword,
// judge_panel and fluency, declared once.
var protocolParam = stages.Param{Name: "protocol", Kind: stages.String, Default: "v2",
	Doc: `the LiveIdeaBench release whose protocol this follows: "v2" (the current code, x66ccff/liveideabench@6fc8285: the defaults shown here) or "v1" (the December 2024 leaderboard of the paper, utils/prompts.yaml and utils/LLM.py @8dbdfef: its own idea, judge and fluency texts, two judged dimensions, no refusal detection, and its score parser for authors_parse); a text or list you set yourself is used whatever the protocol`}

func protocolOf(p stages.Params) (*release, error) {
	r, ok := releases[p.String("protocol")]
	if !ok {
		return nil, stages.ParamErrorf("protocol", `protocol = %q is not one of "v1" (December 2024), "v2" (current)`, p.String("protocol"))
	}
	return r, nil
}

// text is the value of text param name: the protocol's own text when the
// param is left at its declared default (declared), else as set.
func (r *release) text(p stages.Params, name, declared, own string) string {
	if v := p.String(name); v != declared {
		return v
	}
	return own
}

// list is text for a list param: the protocol's list when the param holds
// the declared default itself (engine/config and stages.WithDefaults share
// the declared slice; a list written in the experiment is a slice of its
// own, even with the same values).
func (r *release) list(p stages.Params, name string, declared, own []string) []string {
	v := p.Strings(name)
	if len(v) > 0 && len(declared) > 0 && &v[0] == &declared[0] && len(v) == len(declared) {
		return own
	}
	return v
}
