package scholareval

// Default prompts, after the prompts of the paper's appendix B (soundness
// B.1.2, contribution B.2.2), F.1 (baselines) and E.1 (coverage, after
// Prometheus' absolute grading). Each is a Go text/template; the data each
// gets is named in its param's Doc.

// DefaultMethodsPrompt: data .Idea .MaxMethods .QueriesPerMethod.
const DefaultMethodsPrompt = `You are reviewing the soundness of a research idea. Extract the methods it proposes: the techniques, models, experimental designs and analyses whose validity the literature can speak to.

Research idea:
{{.Idea}}

Rules:
- List at most {{.MaxMethods}} methods, most central to the idea first.
- Each method must be distinct: do not list the same method twice in other words, and do not split one method into its steps.
- Describe each method in one self-contained sentence, faithful to the idea.
- After each method write {{if eq .QueriesPerMethod 1}}"Query:" and one literature search query{{else}}"Queries:" and up to {{.QueriesPerMethod}} literature search queries separated by " | "{{end}} that would find papers reporting evidence for or against the method in the idea's context.

Give each method as one idea in the list.`

// DefaultEvidencePrompt: data .Method .Title .PaperID .Passages.
const DefaultEvidencePrompt = `You extract evidence about a method from a paper.

Method under review:
{{.Method}}

Paper [{{.PaperID}}]: {{.Title}}
Passages retrieved from it:
{{range .Passages}}- {{.}}
{{end}}
From the passages only, state:
- Method: what method or approach the paper used that relates to the method under review;
- Result: what result it reported;
- Conditions: under what conditions (data, setting, scale) the result holds.
If the passages say nothing relevant, say so in one line. Do not add anything the passages do not say.`

// DefaultSynthesisPrompt: data .Idea .Method .Evidence (each .PaperID .Title .Evidence).
const DefaultSynthesisPrompt = `You review the soundness of one method of a research idea against evidence from the literature.

Research idea:
{{.Idea}}

Method under review:
{{.Method}}

Evidence from retrieved papers:
{{range .Evidence}}[{{.PaperID}}] {{.Title}}
{{.Evidence}}

{{else}}(no papers were retrieved for this method)
{{end}}
Write, citing papers only by their bracketed id (for example [{{if .Evidence}}{{(index .Evidence 0).PaperID}}{{else}}id{{end}}]) and only papers listed above:
- Support: the evidence that supports the method as used in this idea;
- Contradictions: the evidence that contradicts it or limits when it works;
- Suggested action: what the authors should change or check.
Then rate the soundness of the method for this idea from 0 (contradicted by the evidence) to 10 (strongly supported).`

// DefaultSoundnessPrompt: data .Idea .Methods (each .Method .Score .Synthesis).
const DefaultSoundnessPrompt = `You write the soundness meta-review of a research idea from the reviews of its methods.

Research idea:
{{.Idea}}

Method reviews:
{{range .Methods}}### {{.Method}} (score {{.Score}}/10)
{{.Synthesis}}

{{end}}
Write three sections, each a bulleted list ordered by importance, citing papers only by the bracketed ids the method reviews use:
## Strengths
## Weaknesses
## Suggestions
Tie every point to the research idea.`

// DefaultDimensionsPrompt: data .Idea .MaxStatements .QueriesPerStatement.
const DefaultDimensionsPrompt = `You are reviewing the contribution of a research idea. Extract the contributions it claims, each under a contribution dimension (for example: problem formulation, method, dataset, evaluation, application, theory).

Research idea:
{{.Idea}}

Rules:
- List at most {{.MaxStatements}} contribution statements, faithful to the idea and not redundant.
- Use few, comparable, high-level dimensions; several statements may share one.
- Write each as "Dimension: statement", then "Queries:" and up to {{.QueriesPerStatement}} focused literature search queries separated by " | " that would find prior work with similar contributions.

Give each contribution statement as one idea in the list.`

// DefaultRelevancePrompt: data .Statements .Title .Abstract.
const DefaultRelevancePrompt = `Rate how similar the contributions of a paper are to the contributions of a research idea.

Contributions of the research idea:
{{range .Statements}}- {{.}}
{{end}}
Paper: {{.Title}}
Abstract: {{.Abstract}}

Scale: 0 no similar contributions; 1 minimally similar; 2 somewhat similar; 3 moderately similar; 4 very similar; 5 the same contributions.`

// DefaultComparePrompt: data .Idea .Dimensions .Title .Abstract.
const DefaultComparePrompt = `Compare the novelty of a research idea with a prior paper along each contribution dimension.

Research idea:
{{.Idea}}

Paper: {{.Title}}
Abstract: {{.Abstract}}

For each dimension give 1 if the idea presents something the paper does not (the idea is more novel), 0 for a tie, insufficient evidence, or a dimension the paper does not cover, and -1 if the paper already presents it or the idea substantially replicates it.
Dimensions:
{{range $i, $d := .Dimensions}}- dimension_{{inc $i}}: {{$d}}
{{end}}`

// DefaultContributionPrompt: data .Idea .Dimensions .Papers (each .ID .Title .Year .Scores).
const DefaultContributionPrompt = `You write the contribution review of a research idea from pairwise comparisons with related papers.

Research idea:
{{.Idea}}

Contribution dimensions and how the idea compares with each paper (1: the idea is more novel, 0: tie, -1: the paper already has it):
{{range .Papers}}[{{.ID}}] {{.Title}}{{if .Year}} ({{.Year}}){{end}}: {{.Scores}}
{{else}}(no related papers were found)
{{end}}
Write three sections, each a bulleted list ordered by importance, citing papers only by their bracketed id above:
## Strengths
## Weaknesses
## Suggestions
Address novelty and impact along the idea's dimensions ({{range $i, $d := .Dimensions}}{{if $i}}; {{end}}{{$d}}{{end}}).`

// DefaultLLMReviewPrompt: data .Idea.
const DefaultLLMReviewPrompt = `Review the following research idea for soundness (are the proposed methods supported or contradicted by published evidence?) and contribution (how does it advance prior work along its dimensions?).

Research idea:
{{.Idea}}

Evaluate each proposed method with related work that supports or contradicts it, and compare the idea's novelty and impact with prior work. Write four sections:
## Strengths
## Weaknesses
## Suggestions
## References
Under References list every work you relied on, one title per line.`

// DefaultCoveragePrompt: data .Plan .Review .Statement .Type .Axis .Severity.
//
// The request ScholarEval's evaluation/coverage.py makes (skai-research/
// ScholarEval@b8391a0), character for character: prometheus-eval's
// ABSOLUTE_PROMPT (prometheus_eval/prompts.py at prometheus-eval/
// prometheus-eval@1a88c06; the variant with a reference answer) filled with
// coverage.py's instruction (the research plan, under a line indented by
// four spaces, as its triple-quoted string has it), the review as the
// response, the rubric statement as the reference answer "that gets a score
// of 5", and coverage.py's rubric through SCORE_RUBRIC_TEMPLATE. Its typos
// are theirs ("paraphrased of articulated", "a evaluation criteria"), and
// so is the space after "###Feedback:".
const DefaultCoveragePrompt = `###Task Description:
An instruction (might include an Input inside it), a response to evaluate, a reference answer that gets a score of 5, and a score rubric representing a evaluation criteria are given.
1. Write a detailed feedback that assess the quality of the response strictly based on the given score rubric, not evaluating in general.
2. After writing a feedback, write a score that is an integer between 1 and 5. You should refer to the score rubric.
3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"
4. Please do not generate any other opening, closing, and explanations.

###The instruction to evaluate:
Given the following research plan detailing the problem, methodology, and planned experiments that a research team intends to implement, give an evaluation of the research plan based on its technical soundness and scientific novelty and contribution to the field.

    Research plan: {{.Plan}}

###Response to evaluate:
{{.Review}}

###Reference Answer (Score 5):
{{.Statement}}

###Score Rubrics:
[You are given a single essential statement from a research idea review targeting the technical soundness and scientific contribution of a research idea. This statement was extracted from actual human reviews about the research idea and will be used as your ground-truth reference. Additionally, you will be given a research idea review that aims to give a detailed evaluation of the same research idea. The review given to you will typically be long and composed of multiple sections and references to related papers. Your job is to verify that the given review has a mention of the reference statement in its content. These references can be paraphrased of articulated differently, but they should express the same meaning as the reference statement. Does the given review express the reference statement?]
Score 1: The given review does not mention the reference statement at all
Score 2: The given review mentions some related concepts but does not express the core meaning of the reference statement
Score 3: The given review partially expresses the reference statement but misses key aspects or nuances
Score 4: The given review expresses most aspects of the reference statement with minor omissions or slight differences in emphasis
Score 5: The given review clearly expresses the reference statement, capturing its core meaning and implications

###Feedback: `

// DefaultCoverageSystem is prometheus-eval's ABS_SYSTEM_PROMPT, the system
// message PrometheusEval.absolute_grade sends before every prompt.
const DefaultCoverageSystem = "You are a fair judge assistant tasked with providing clear, objective feedback based on specific criteria, ensuring each assessment reflects the absolute standards set for performance."

// Prometheus-eval's sampling defaults (batch_completions_with_retries,
// prometheus_eval/utils.py), which coverage.py leaves in place: its
// LiteLLM wrapper sends max_tokens, temperature and top_p, and drops
// repetition_penalty (1.03) and best_of (1), which LiteLLM refuses.
const (
	PrometheusTemperature = 1.0
	PrometheusTopP        = 0.9
	PrometheusMaxTokens   = 1024
)

// DefaultPreferenceSystem is the system message of ScholarEval's pairwise
// judge (evaluation/llm_metrics.py judge_reports at
// skai-research/ScholarEval@b8391a0), character for character: its
// sentences run together where its string literals were concatenated, and
// "nned" is its typo.
const DefaultPreferenceSystem = "You are an expert scientific reviewer. You will be given two research evaluation reports (Report A and Report B) and you must answer which one is better based on the following criteria:Evidence-based: An evidence-based report is one that grounds its claims in the literature and backs them with relevant citations that improve traceability and its overall trustworthiness and reliability. Which report is more evidence-based?Actionability: Actionability is the extent to which the report offers varied, clear, and actionable suggestions that are likely to improve the research idea. Which report is more actionable?Depth: Depth is measured by the degree of engagement with the point being evaluated and the literature cited. A deep report discusses each point from multiple angles and references specific details about the literature it cites, rather than relying on generic statements followed by citations. Which response has greater depth?You must choose either A, B, or Tie (when both responses are equivalent). Read both responses thoroughly before judging, and give thorough rationales that show that you are a fair and unbiased judge. If you choose that one response is better, clearly rationalize why. If they are equivalent in quality based on any of these criteria then you nned to choose Tie."

// DefaultPreferencePrompt: data .ReportA .ReportB. judge_reports' user
// message, character for character: its format example sits right after
// "below." and, written outside the f-strings, keeps its doubled braces,
// which the template writes as {{"{{"}} and {{"}}"}}.
const DefaultPreferencePrompt = "Report A:\n{{.ReportA}}\n\nReport B:\n{{.ReportB}}\n\nJudge the responses based on the criteria, while respecting the output format below.```json\n{{\"{{\"}}\n  \"Evidence-based-rationale\": ...   \"Evidence-based-winner\": <A, B, or Tie>   \"Actionability-rationale\": ...   \"Actionability-winner\": <A, B, or Tie>   \"Depth-rationale\": ...   \"Depth-winner\": <A, B, or Tie> {{\"}}\"}}\n```"
