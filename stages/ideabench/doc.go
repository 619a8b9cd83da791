// Package ideabench implements the IdeaBench pipeline (Guo et al.) as
// ideaflow stage types:
//
//	filter_references  pure, one node per target: the paper's reference filter
//	generate_ideas     model, one node per target x sample (or per target in batch mode)
//	rank_ideas         model, one node per target x permutation: listwise ranking
//	insight_score      pure, one aggregate node: the Insight Score
//	similarity         per target: rouge_l scores, or embeddings of the texts
//	similarity_score   pure, one aggregate node: best-of-n similarity
//	extract_idea       per target: the dataset's idea (pure), else a model call
//	                   stating the abstract's idea without its results
//	overlap_rating     model, one node per target (the most similar idea, with
//	                   similarity) or per generate_ideas node: 0-10 (or 1-10) overlap
//	overlap_score      pure, one aggregate node: mean, median, p80 overlap
//
// # Prompt templates
//
// Prompts are Go text/template texts (see stages.Render for the helpers:
// numbered, join, trim, upper, lower, inc). A reference to a field that does
// not exist is an error at layout time, before any model call.
//
// generate_ideas renders `system` and `prompt` with:
//
//	.References  []Reference, the target's kept references in order:
//	             .Number (1-based), .ID, .Title, .Abstract
//	.N           how many ideas this request asks for: 1 in independent mode
//	             (so raising n reuses earlier samples), n in batch mode
//	.Sample      the sample index (0-based) in independent mode; 0 in batch mode
//	.Keywords    the target's topic keywords if the dataset gives them, else empty
//	.Domain      the stage's domain parameter ("biomedical" by default)
//
// The generator never sees the target's title, abstract or idea.
//
// rank_ideas renders `prompt` with:
//
//	.Quality     .Name and .Definition of the quality block
//	.Ideas       []Candidate, in letter order: .Letter ("A"...), .Text;
//	             the target idea is one of them, and nothing says which
//	.Letters     the letters in use, e.g. "ABCD"
//	.N           the number of generated ideas (candidates = N+1)
//
// extract_idea renders `prompt` with .Title, .Abstract and .Domain;
// overlap_rating renders `prompt` with .Idea (the generated idea), .Abstract
// (the target's) and .Min (the low end of its scale: 0 or 1).
//
// The model stages append the answer-format instructions of the expected answer
// (format.Instructions) after the rendered prompt, so a custom template only
// has to say what to do, not how to lay out the answer. With prompt_style =
// "authors" they send the authors' prompts alone, byte for byte, as
// amir-hassan25/IdeaBench@9dbd125 does (prompts_authors.go); the ranking and
// overlap answers are still parsed strictly, and each output also keeps
// authors_parse, what the authors' parser reads from the first answer
// (format.IdeaBenchRanking, format.IdeaBenchRating), which insight_score
// and overlap_score read with parse = "authors". FIDELITY.md at the
// repository's root lists every step against the authors' code.
package ideabench
