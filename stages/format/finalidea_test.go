package format

import (
	"errors"
	"testing"
)

func TestFinalIdea(t *testing.T) {
	const idea = "Use graphene sensors to track soil moisture."
	tests := []struct {
		name, text string
		want       string // "" means no marker found
	}{
		{"bold with colon inside", "Let me think about sensors.\n\n**Final Idea:** " + idea, idea},
		{"bold with colon outside", "Reasoning here.\n**Final Idea**: " + idea, idea},
		{"plain label", "Some thoughts.\nFinal Idea: " + idea, idea},
		{"lower case", "thoughts\nfinal idea: " + idea, idea},
		{"upper case", "THOUGHTS\nFINAL IDEA: " + idea, idea},
		{"heading line", "Thinking...\n\n## Final Idea\n\n" + idea, idea},
		{"heading with colon", "Thinking...\n### Final Idea:\n" + idea, idea},
		{"italic with colon outside", "Hmm.\n*Final idea*: " + idea, idea},
		{"underscores", "Hmm.\n__Final Idea:__ " + idea, idea},
		{"bold line alone", "Draft one.\n**Final Idea**\n" + idea, idea},
		{"dash separator", "Notes.\nFinal Idea - " + idea, idea},
		{"inline after reasoning", "So I settle on it. **Final Idea:** " + idea, idea},
		{"last marker wins", "Final idea: a first draft.\nWait, better:\n**Final Idea:** " + idea, idea},
		{"mention is not a marker", "My final idea should be about soil. " + idea, ""},
		{"no marker", idea, ""},
		{"marker with nothing after", "All my reasoning.\n**Final Idea:**", ""},
		{"multi-line idea kept whole", "x\n**Final Idea:**\nLine one.\nLine two.", "Line one.\nLine two."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FinalIdea(tc.text)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("FinalIdea = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

func TestCollapseSpace(t *testing.T) {
	if got := CollapseSpace("  a\n\tb   c\r\n d "); got != "a b c d" {
		t.Errorf("got %q", got)
	}
}

func TestPhraseRefusal(t *testing.T) {
	phrases := []string{"I'm sorry", "I cannot", "As an AI"}
	tests := []struct {
		name, text, want string
	}{
		{"opening apology", "I'm sorry, but I can't help with that.", "I'm sorry"},
		{"any case", "i CANNOT generate ideas about this.", "I cannot"},
		{"anywhere in the answer", "Here is an idea. As an AI I have no lab, but: ...", "As an AI"},
		{"typographic apostrophe", "I\u2019m sorry, this topic is off limits.", "I'm sorry"},
		{"idea without a phrase", "We propose a graphene soil sensor network.", ""},
		{"phrase only in reasoning before the final idea", "I cannot decide between two.\n**Final Idea:** A graphene soil sensor network.", ""},
		{"phrase in the final idea", "Thinking.\n**Final Idea:** I cannot provide that.", "I cannot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PhraseRefusal(tc.text, phrases)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("PhraseRefusal = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
	if _, ok := PhraseRefusal("anything", []string{"", "  "}); ok {
		t.Error("blank phrases matched")
	}
}

// With Refusals set, Parse refuses Text answers by phrase (the built-in
// detection is off), and other kinds by phrase instead of the built-in rule.
func TestParseRefusalPhrases(t *testing.T) {
	spec := Spec{Kind: Text, Refusals: []string{"I cannot"}}
	if _, err := Parse(spec, "I cannot help with that."); err == nil || !errorsIs(err, ErrRefusal) {
		t.Errorf("Text with phrase: err %v, want ErrRefusal", err)
	}
	if a, err := Parse(spec, "  An idea about soil.  "); err != nil || a.Text != "An idea about soil." {
		t.Errorf("Text without phrase: %+v, %v", a, err)
	}
	// Without Refusals a Text answer is never a refusal.
	if _, err := Parse(Spec{Kind: Text}, "I'm sorry, I can't help with that."); err != nil {
		t.Errorf("plain Text: %v", err)
	}
	// The phrase list replaces the built-in rule for other kinds too.
	if _, err := Parse(Spec{Kind: Rating, Min: 1, Max: 10, Refusals: []string{"nope"}}, "I'm sorry, I can't rate this."); err == nil || errorsIs(err, ErrRefusal) {
		t.Errorf("rating without a listed phrase: err %v, want a parse error that is not a refusal", err)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestRepairMessageReask(t *testing.T) {
	err := refusalError("I cannot")
	if got := RepairMessage(Spec{Kind: Text, Reask: "This is research."}, err); got != "This is research." {
		t.Errorf("reask: %q", got)
	}
	if got := RepairMessage(Spec{Kind: Text}, err); got == "" || got == "This is research." {
		t.Errorf("default justification: %q", got)
	}
}
