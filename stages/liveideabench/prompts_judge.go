package liveideabench

// DefaultJudgeSystemPrompt is the paper's judge ("critic") prompt, as the
// authors' utils/prompts.json sends it as the system message (the version
// with clarity), with the dimensions and the example block written from the
// dimensions param. With the default dimensions it renders the original
// text exactly (the original has a space at the end of the originality
// line, kept). Its example leaves placeholders, not numbers, so it cannot
// anchor the scores.
const DefaultJudgeSystemPrompt = `You are an extremely demanding scientific reviewer with the highest critical standards, like those at Nature or Science. When evaluating scientific ideas, you will assess them on {{.Count}} key dimensions:

{{range $i, $d := .Dimensions}}{{inc $i}}. {{$d.Name}}: {{$d.Definition}}
{{end}}
Your response should consist of two parts: a text analysis followed by a JSON score block.

First, provide your brief analysis (less than 100 words) of the idea. Then, for each dimension, provide a score from 1 to 10 where 1-3 = poor, 4-6 = average, 7-10 = excellent.

For example:
` + "```json" + `
{
{{range $i, $d := .Dimensions}}{{if $i}},
{{end}}    "{{$d.Name}}": <score_1_to_10>{{end}}
}` + "```"

// DefaultJudgePrompt is the user message the original sends with the
// system prompt: the idea alone (template data .Idea, .Keyword, .Domain).
const DefaultJudgePrompt = `Please evaluate the following scientific idea:

{{.Idea}}`

// JudgeSystemPromptV1 is the first release's judge prompt (utils/prompts.yaml,
// critic_prompt.description, at 8dbdfef), sent as the system message, its
// dimensions and score block written from the dimensions param: with
// originality and feasibility and DefinitionsV1 it renders the original
// text exactly.
const JudgeSystemPromptV1 = `You are an extremely demanding scientific reviewer with the highest critical standards, like those at Nature or Science. When evaluating scientific ideas, you will assess them on {{.Count}} key dimensions:

{{range $i, $d := .Dimensions}}{{inc $i}}. {{$d.Name}}: {{$d.Definition}}
{{end}}
For each dimension, you will provide a score from 1 to 10, no need to explain the reason.

Your response MUST ALWAYS follow this exact Python dictionary format for consistency and parsing:

SCORES = {
{{range $i, $d := .Dimensions}}{{if $i}},
{{end}}    "{{$d.Name}}": <score_1_to_10>{{end}}
}`

// JudgePromptV1 is the first release's user message (utils/LLM.py
// CriticLLM.critique_idea at 8dbdfef).
const JudgePromptV1 = `Please evaluate the following scientific idea and give your scores directly:

{{.Idea}}`

// DefaultDefinitions are the current release's descriptions of its
// dimensions; a dimension without one needs an entry in the stage's
// definitions.
var DefaultDefinitions = map[string]string{
	"originality": "Novel contribution to unexplored areas or innovative approaches to existing problems ",
	"feasibility": "Technical implementation and practicality",
	"clarity":     "How well-articulated and easy to understand the idea is",
}

// DefinitionsV1 are the first release's (it judged no clarity; a v1 judge
// asked for it gets the current definition).
var DefinitionsV1 = map[string]string{
	"originality": "Novel contribution to unexplored areas",
	"feasibility": "Technical implementation and practicality",
	"clarity":     DefaultDefinitions["clarity"],
}

// DefaultFluencyPrompt is the current release's fluency prompt
// (prompts.json's fluency_critic_prompt at 6fc8285, which hash.py sends):
// two ideas for one keyword, A/B/C/D. Template data: .Keyword, .A (the
// first idea), .B (the second).
const DefaultFluencyPrompt = `Here are two ideas submitted to "Good Scientific Ideas" Competition, which both relate to "{{.Keyword}}":

# The first idea

{{.A}}

# The second idea

{{.B}}


# Question

Evaluate the similarity between these two ideas that both relate to "{{.Keyword}}". Please choose the best answer:

A. Completely different ideas addressing different problems, despite relating to the same keyword.
B. Different ideas but addressing similar problems.
C. Similar ideas addressing similar or identical problems.
D. Academically identical ideas with the same core approach and problem statement.

ONLY ANSWER A/B/C/D, DO NOT EXPLAIN`

// FluencyPromptV1 is the first release's fluency prompt (utils/prompts.yaml,
// critic_prompt_fluency.description, at 8dbdfef).
const FluencyPromptV1 = `Here are two ideas submitted to "Good Scientific Ideas" Competition, which both relate to "{{.Keyword}}":
# The first idea

{{.A}}

# The second idea

{{.B}}

# Question

Are these two ideas, which both relate to "{{.Keyword}}", the same? Please choose the best answer:

A. Different, even though they're both related to the same keyword.
B. Similar but not academically equivalent
C. Very similar academically
D. Academically identical

ONLY ANSWER A/B/C/D, DO NOT EXPLAIN`
