package ideabench

import "strings"

// The authors' prompts, as amir-hassan25/IdeaBench@9dbd125 sends them: the
// text of each LangChain template with its pieces joined as LangChain joins
// them (a FewShotPromptTemplate joins its prefix, examples and suffix with
// its separator and leaves out empty pieces), one user message, no system
// message and no answer-format instructions after it. They are the prompts
// of prompt_style = "authors"; Go templates stand for the authors'
// placeholders.

// AuthorsGeneratePrompt is generate_hypotheses.py's prompt (the paper's
// Figure 1): its prefix (with the indentation its Python source gives the
// second line), each reference as "Abstract N: text", its suffix, joined
// by blank lines. .Domain stands for the fixed "biomedical". The abstracts
// reach it cleaned as the authors clean them (see authorsAbstract).
const AuthorsGeneratePrompt = "You are a {{.Domain}} researcher. You are tasked with creating a hypothesis or research idea given some background knowledge. The background knowledge I will provide abstracts from other papers.\n" +
	"\n" +
	"    Here are the abstracts:" +
	"{{range .References}}\n\nAbstract {{.Number}}: {{.Abstract}}{{end}}" +
	"\n\n" +
	"Using these abstracts, reason over them and come up with a novel hypothesis. Please avoid copying ideas directly, rather use the insights to inspire a novel hypothesis in the form of a brief and concise paragraph."

// AuthorsRankPrompt is llm_ranking_eval.py's prompt (the paper's Figure 2):
// the prefix, with the ranking criterion (the quality's name, which is all
// the authors pass: "novelty", "feasibility") in place of
// {ranking_criteria}, then each idea as "Hypothesis X: \n text", joined by
// blank lines. The prefix's trailing spaces and its closing "\n" escape
// (a newline before the source's own) are the authors'.
const AuthorsRankPrompt = "You are a reviewer tasked with ranking the quality of a set of research ideas based on their {{.Quality.Name}}. The idea with the highest {{.Quality.Name}} should be ranked first. \n" +
	"\n" +
	"Please rank the following hypotheses in the format:\n" +
	"\n" +
	"1. Hypothesis (insert letter): (insert brief rationale)\n" +
	"....\n" +
	"n. Hypothesis (insert letter): (insert brief rationale)\n" +
	"\n" +
	"Please rank the following hypotheses: \n" +
	"\n" +
	"{{range .Ideas}}\n\nHypothesis {{.Letter}}: \n {{.Text}}{{end}}"

// authorsAbstract cleans a reference abstract as generate_hypotheses.py
// does before formatting its prompt: "{greater than or equal to}" becomes
// "≥", then every remaining brace is removed.
func authorsAbstract(s string) string {
	s = strings.ReplaceAll(s, "{greater than or equal to}", "≥")
	return strings.NewReplacer("{", "", "}", "").Replace(s)
}

// authorsTemplateError says why the authors' ranking prompt could not have
// been sent for these texts, or "": their ranking template is a Python
// format string with the ideas inside it, so a brace in an idea or the
// target idea (other than a doubled {{ or }}, or the {ranking_criteria}
// placeholder) makes str.format fail, and their code records an empty
// ranking for the target, which their analysis leaves out.
func authorsTemplateError(texts []string) string {
	for _, t := range texts {
		t = strings.ReplaceAll(t, "{ranking_criteria}", "")
		t = strings.ReplaceAll(strings.ReplaceAll(t, "{{", ""), "}}", "")
		if strings.ContainsAny(t, "{}") {
			return "a brace in an idea breaks the authors' prompt template (Python str.format), so their code asks nothing and records an empty ranking"
		}
	}
	return ""
}
