package ideabench

// DefaultGenerateSystem profiles the generator as a domain researcher, as the
// paper does to draw on domain-specific parametric knowledge.
const DefaultGenerateSystem = `You are a {{.Domain}} researcher.`

// DefaultGeneratePrompt is the paper's generation prompt (its Figure 1),
// adapted to ask for .N ideas so the same text serves both modes.
const DefaultGeneratePrompt = `You are tasked with creating a hypothesis or research idea given some background knowledge. The background knowledge is provided as abstracts from other papers.

Here are the abstracts:
{{range .References}}
Abstract {{.Number}}: {{.Abstract}}
{{end}}
Using these abstracts, reason over them and come up with {{if eq .N 1}}a novel hypothesis{{else}}{{.N}} novel hypotheses{{end}}. Please avoid copying ideas directly, rather use the insights to inspire {{if eq .N 1}}a novel hypothesis in the form of a brief and concise paragraph{{else}}each hypothesis, each in the form of a brief and concise paragraph{{end}}.
`

// DefaultRankPrompt is the paper's ranking prompt (its Figure 2) with the
// quality block's definition spelled out, which is how the paper lets two
// researchers mean different things by "novelty".
const DefaultRankPrompt = `You are a reviewer tasked with ranking the quality of a set of research ideas based on their {{.Quality.Name}}.
{{- with .Quality.Definition}}
By {{$.Quality.Name}} we mean: {{.}}
{{- end}}
The idea with the highest {{.Quality.Name}} should be ranked first.

Please rank the following hypotheses:
{{range .Ideas}}
Hypothesis {{.Letter}}:
{{.Text}}
{{end}}`
