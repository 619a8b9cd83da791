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
// the authors' evaluate_hypotheses.py sends it) with the low end of its
// scale as .Min: the authors' prompt says 1 to 10 (scale = "1-10"), the
// paper's text 0 to 10 (scale = "0-10", whose rendering this prompt had
// before .Min). With prompt_style = "authors" it is sent as it renders;
// with "ideaflow" the answer-format instructions follow it.
const DefaultOverlapPrompt = `You are an expert in understanding and analyzing scientific content. Your task is to evaluate the degree of overlap between the ideas presented in a hypothesis and the abstract of a scientific paper. Please read both the hypothesis and the abstract carefully. Then, rate the overlap on a scale of {{.Min}} to 10, where {{.Min}} indicates minimal or no overlap, and 10 indicates a perfect or nearly perfect overlap. Provide a brief explanation for your rating.

Hypothesis: {{.Idea}}

Abstract: {{.Abstract}}

Rating:
On a scale of {{.Min}}-10, rate the overlap between the ideas in the hypothesis and the abstract.

Explanation:
In one sentence, provide a brief explanation for your rating, mentioning the key points of overlap and any significant differences you observed.
`
