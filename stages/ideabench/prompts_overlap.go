package ideabench

// DefaultExtractPrompt is the paper's prompt for stating a target's research
// idea (its Figure 5, as the authors' generate_summaries.py sends it): the
// abstract summarised as a hypothesis, without detailed results, so a target
// idea does not stand out among generated ideas by its findings. The field is
// the stage's domain parameter instead of the fixed "biomedical".
const DefaultExtractPrompt = `Write a concise paragraph summarizing the following {{.Domain}} paper abstract as if you are proposing your own research idea or hypothesis. Focus on describing the main research idea and provide a high-level summary of the findings without detailed results or specific numerical data. Please begin the paragraph with "Hypothesis: " or "Given that ".

Abstract:
{{.Abstract}}

Summary:
`

// DefaultOverlapPrompt is the paper's idea-overlap prompt (its Figure 3, as
// the authors' evaluate_hypotheses.py sends it) on the 0-10 scale the paper's
// text gives: the original prompt says 1-10, which disagrees with the text
// and with the answer-format instructions appended after it. A judge that
// keeps to 1-10 is still within range.
const DefaultOverlapPrompt = `You are an expert in understanding and analyzing scientific content. Your task is to evaluate the degree of overlap between the ideas presented in a hypothesis and the abstract of a scientific paper. Please read both the hypothesis and the abstract carefully. Then, rate the overlap on a scale of 0 to 10, where 0 indicates minimal or no overlap, and 10 indicates a perfect or nearly perfect overlap. Provide a brief explanation for your rating.

Hypothesis: {{.Idea}}

Abstract: {{.Abstract}}

Rating:
On a scale of 0-10, rate the overlap between the ideas in the hypothesis and the abstract.

Explanation:
In one sentence, provide a brief explanation for your rating, mentioning the key points of overlap and any significant differences you observed.
`
