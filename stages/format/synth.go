package format

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"unicode"
)

// Synthesize writes an answer of spec's shape, as a model might, for the
// offline mock provider. r chooses both the content and the surface style
// (numbered, bold, headings, JSON in a fence, prose labels, ...) so that a mock
// run exercises the parser as real answers would; Parse always accepts the
// result for a valid spec. Ideas and texts mention topic, a few words the
// caller takes from the prompt, so synthetic outputs read as on-topic.
func Synthesize(spec Spec, r *rand.Rand, topic string) string {
	text, _ := synthesize(spec, r, topic)
	return text
}

// synthesize also returns the answer Parse must read back from the text, so
// the two can be checked against each other.
func synthesize(spec Spec, r *rand.Rand, topic string) (string, *Answer) {
	topic = cleanTopic(topic)
	switch spec.Kind {
	case Ideas:
		return synthIdeas(spec, r, topic)
	case Ranking:
		return synthRanking(spec, r, topic)
	case Fields:
		return synthFields(spec, r, topic)
	case Scores:
		return synthScores(spec, r, topic)
	case Letter:
		return synthLetter(spec, r)
	case Rating:
		return synthRating(spec, r, topic)
	}
	idea := newIdea(r, topic)
	text := idea.title + ". " + idea.body
	return text, &Answer{Text: text}
}

// cleanTopic keeps letters, digits, hyphens and single spaces, so a topic can
// never inject markup into the synthetic answer.
func cleanTopic(topic string) string {
	t := strings.Join(strings.FieldsFunc(topic, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-')
	}), " ")
	if t == "" {
		return "the research problem"
	}
	return t
}

// capitalize upper-cases an ASCII first letter ("originality" -> "Originality").
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func pick(r *rand.Rand, list []string) string { return list[r.Intn(len(list))] }

type synthIdea struct{ title, body string }

// newIdea writes one idea of about 60 to 100 words (title included): sentences
// are added in a fixed order until the idea reaches 60 words, skipping any
// that would take it past 100.
func newIdea(r *rand.Rand, topic string) synthIdea {
	title := fmt.Sprintf("%s %s for %s", pick(r, titleAdjectives), pick(r, titleNouns), topic)
	sentences := []string{
		fmt.Sprintf("We propose to %s %s by %s.", pick(r, goalVerbs), topic, pick(r, methods)),
		fmt.Sprintf("Current work on %s relies on %s, which %s.", topic, pick(r, limitations), pick(r, consequences)),
		pick(r, coreSteps) + ".",
		"We will evaluate the approach " + pick(r, evaluations) + ".",
		"If it succeeds, " + pick(r, impacts) + ".",
		pick(r, feasibility),
	}
	words := len(strings.Fields(title))
	var body []string
	for _, s := range sentences {
		if words >= 60 {
			break
		}
		n := len(strings.Fields(s))
		if words+n > 100 {
			continue
		}
		body = append(body, s)
		words += n
	}
	return synthIdea{title: title, body: strings.Join(body, " ")}
}

func synthIdeas(spec Spec, r *rand.Rand, topic string) (string, *Answer) {
	n := spec.N
	if n == 0 {
		n = 2 + r.Intn(3)
	}
	ideas := make([]synthIdea, n)
	for i := range ideas {
		ideas[i] = newIdea(r, topic)
	}
	var b strings.Builder
	if n > 1 && r.Intn(2) == 0 {
		fmt.Fprintf(&b, pick(r, preambles)+"\n\n", n, topic)
	}
	want := make([]string, n)
	styles := 8
	if n == 1 {
		styles = 5 // bullets need several items; prose only works for one
	}
	switch style := r.Intn(styles); style {
	case 0, 1, 2, 3:
		layouts := [...]string{"Idea %d: %s\n%s", "**Idea %d: %s**\n%s", "### Idea %d: %s\n\n%s", "%d) %s\n   %s"}
		for i, idea := range ideas {
			fmt.Fprintf(&b, layouts[style]+"\n\n", i+1, idea.title, idea.body)
			want[i] = idea.title + "\n" + idea.body
		}
	case 4:
		type item struct {
			Title       string `json:"title"`
			Description string `json:"description"`
		}
		items := make([]item, n)
		for i, idea := range ideas {
			items[i] = item{idea.title, idea.body}
			want[i] = idea.title + ": " + idea.body
		}
		out, _ := json.MarshalIndent(items, "", "  ")
		fmt.Fprintf(&b, "```json\n%s\n```\n", out)
	case 5:
		for i, idea := range ideas {
			fmt.Fprintf(&b, "%d. **%s**: %s\n", i+1, idea.title, idea.body)
			want[i] = idea.title + ": " + idea.body
		}
	case 6:
		list := make([]string, n)
		for i, idea := range ideas {
			list[i] = idea.title + ": " + idea.body
		}
		copy(want, list)
		out, _ := json.Marshal(map[string][]string{"ideas": list})
		b.Write(out)
		b.WriteString("\n")
	default:
		for i, idea := range ideas {
			fmt.Fprintf(&b, "- **%s**: %s\n", idea.title, idea.body)
			want[i] = idea.title + ": " + idea.body
		}
	}
	text := strings.TrimSpace(b.String())
	if r.Intn(2) == 0 {
		text += "\n\n" + pick(r, outros)
	}
	return text + "\n", &Answer{Ideas: want}
}

func synthRanking(spec Spec, r *rand.Rand, topic string) (string, *Answer) {
	letters := spec.letters()
	order := make([]string, len(letters))
	for i, p := range r.Perm(len(letters)) {
		order[i] = letters[p : p+1]
	}
	answer := &Answer{Ranking: order}
	if len(order) == 0 {
		return "Ranking:", answer
	}
	if spec.Style == StyleHypothesisList {
		return synthHypothesisList(order, r), answer
	}
	reason := fmt.Sprintf("I compared the ideas on how well they address %s.", topic)
	switch r.Intn(7) {
	case 0:
		return fmt.Sprintf("%s Idea %s stands out because %s.\n\nRanking: %s", reason, order[0], pick(r, rationales), strings.Join(order, " > ")), answer
	case 1:
		return fmt.Sprintf("%s\n\n**Final ranking:** %s", reason, strings.Join(order, ", ")), answer
	case 2:
		var b strings.Builder
		b.WriteString("Ranking from best to worst:\n\n")
		for i, c := range order {
			fmt.Fprintf(&b, "%d. **Idea %s**", i+1, c)
			if i+1 < len(order) {
				fmt.Fprintf(&b, ": stronger than Idea %s because %s", order[i+1], pick(r, rationales))
			}
			b.WriteString("\n")
		}
		return b.String(), answer
	case 3:
		out, _ := json.Marshal(order)
		return fmt.Sprintf("```json\n{\"ranking\": %s, \"rationale\": %q}\n```", out, reason), answer
	case 4:
		return fmt.Sprintf("%s\n\nRanking: [%s]", reason, strings.Join(order, ", ")), answer
	case 5:
		naive := make([]string, len(letters))
		for i := range letters {
			naive[i] = letters[i : i+1]
		}
		return fmt.Sprintf("At first glance the order %s looks plausible, but a closer reading changes it.\n\nFinal ranking: %s",
			strings.Join(naive, " > "), strings.Join(order, " > ")), answer
	default:
		return "ranking: " + strings.ToLower(strings.Join(order, " > ")), answer
	}
}

// scoreRange is where synthetic scores are drawn from; an unbounded spec
// gets Min..Min+9.
func scoreRange(spec Spec) (int, int) {
	if spec.bounded() {
		return spec.Min, spec.Max
	}
	return spec.Min, spec.Min + 9
}

func drawScore(spec Spec, r *rand.Rand) int {
	lo, hi := scoreRange(spec)
	return lo + r.Intn(hi-lo+1)
}

func synthFields(spec Spec, r *rand.Rand, topic string) (string, *Answer) {
	vals := make(map[string]int, len(spec.Fields))
	for _, f := range spec.Fields {
		vals[f] = drawScore(spec, r)
	}
	answer := &Answer{Fields: vals}
	var b strings.Builder
	member := func(i int, format string, args ...any) {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  "+format, args...)
	}
	style := r.Intn(6)
	if style == 3 && !spec.bounded() {
		style = 0 // "7/10" needs a scale
	}
	switch style {
	case 0:
		b.WriteString("```json\n{\n")
		for i, f := range spec.Fields {
			member(i, "%q: %d", f, vals[f])
		}
		b.WriteString("\n}\n```")
	case 1:
		fmt.Fprintf(&b, "Scores for the idea on %s:\n```json\n{\n", topic)
		for _, f := range spec.Fields {
			fmt.Fprintf(&b, "  %q: %d, // %s\n", f, vals[f], pick(r, rationales))
		}
		b.WriteString("}\n```")
	case 2:
		b.WriteString("{\n  \"scores\": {\n")
		for i, f := range spec.Fields {
			member(i, "  %q: \"%d\"", f, vals[f])
		}
		fmt.Fprintf(&b, "\n  },\n  \"comment\": \"The idea on %s %s.\"\n}", topic, pick(r, rationales))
	case 3:
		for _, f := range spec.Fields {
			fmt.Fprintf(&b, "**%s:** %d/%d\n", capitalize(f), vals[f], spec.Max)
		}
	case 4:
		b.WriteString("{\n")
		for i, f := range spec.Fields {
			member(i, "%q: %d.0", capitalize(f), vals[f])
		}
		b.WriteString("\n}")
	default:
		b.WriteString("{")
		for i, f := range spec.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "'%s': %d", strings.ReplaceAll(f, "'", `\'`), vals[f])
		}
		b.WriteString("}")
	}
	return b.String(), answer
}

func synthLetter(spec Spec, r *rand.Rand) (string, *Answer) {
	letters := spec.letters()
	if letters == "" {
		return "Answer:", &Answer{}
	}
	c := letters[r.Intn(len(letters))]
	answer := &Answer{Letter: string(c)}
	switch r.Intn(7) {
	case 0:
		return fmt.Sprintf("Answer: %c", c), answer
	case 1:
		return fmt.Sprintf("**%c**", c), answer
	case 2:
		return fmt.Sprintf("%c. The two ideas share their framing but differ in method and scope.", c), answer
	case 3:
		return fmt.Sprintf(`{"answer": "%c"}`, c), answer
	case 4:
		var b strings.Builder
		for i := 0; i < len(letters); i++ {
			if letters[i] != c {
				fmt.Fprintf(&b, "It is not %c, because the ideas differ in what they measure. ", letters[i])
			}
		}
		fmt.Fprintf(&b, "\n\nAnswer: %c", c)
		return strings.TrimSpace(b.String()), answer
	case 5:
		return fmt.Sprintf("The answer is (%c).", c), answer
	default:
		return fmt.Sprintf("(%c)", c+'a'-'A'), answer
	}
}

func synthRating(spec Spec, r *rand.Rand, topic string) (string, *Answer) {
	v := drawScore(spec, r)
	expl := fmt.Sprintf(pick(r, ratingReasons), topic)
	answer := &Answer{Rating: v, Explanation: expl}
	style := r.Intn(6)
	if (style == 1 || style == 4) && !spec.bounded() {
		style = 0 // "N/M" and "N out of M" need a scale
	}
	switch style {
	case 0:
		return fmt.Sprintf("Rating: %d\nExplanation: %s", v, expl), answer
	case 1:
		return fmt.Sprintf("**Rating:** %d/%d\n\n**Explanation:** %s", v, spec.Max, expl), answer
	case 2:
		out, _ := json.Marshal(map[string]any{"rating": v, "explanation": expl})
		return "```json\n" + string(out) + "\n```", answer
	case 3:
		return fmt.Sprintf("Explanation: %s\nRating: %d", expl, v), answer
	case 4:
		text := fmt.Sprintf("I would rate this %d out of %d. %s", v, spec.Max, expl)
		answer.Explanation = text
		return text, answer
	default:
		return fmt.Sprintf("Rating: %d.0\nExplanation: %s", v, expl), answer
	}
}
