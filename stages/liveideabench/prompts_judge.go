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

// DefaultDefinitions are the paper's descriptions of its dimensions; a
// dimension without one needs an entry in the stage's definitions.
var DefaultDefinitions = map[string]string{
	"originality": "Novel contribution to unexplored areas or innovative approaches to existing problems ",
	"feasibility": "Technical implementation and practicality",
	"clarity":     "How well-articulated and easy to understand the idea is",
}

// DefaultFluencyPrompt is the paper's fluency prompt (prompts.json's
// fluency_critic_prompt): two ideas for one keyword, A/B/C/D. Template
// data: .Keyword, .A (the first idea), .B (the second).
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
