package liveideabench

// DefaultIdeaPrompt is LiveIdeaBench's idea prompt (utils/prompts.json,
// idea_prompt.description, of the public code), the keyword in place of
// {{keywords}}. The first release (the December 2024 leaderboard) asked for
// ideas that are "novel, verifiable, practically valuable, and able to
// advance the field" and "within 100 words"; this is the later wording that
// matches the clarity judge.
const DefaultIdeaPrompt = `I'll be submitting your next responses to a "Good Scientific Idea" expert review panel. If they consider your idea to be a good one, you'll receive a reward. Your assigned keyword is: "{{ .Keyword }}". You may provide background information. The idea MUST be concisely expressed within 100 words total (including any background information). (Note: good scientific ideas should be original (novel contribution), feasible (technically implementable), clearly articulated, and address meaningful problems in the field.).`

// DefaultReask is the research justification sent, once, after a refusal:
// the sentences LiveIdeaBench's fallback prompt adds to the idea prompt.
// The original sends the whole fallback prompt as a new conversation; here
// it follows the refusal in the same one, so the model sees what it
// declined.
const DefaultReask = `This is a research study comparing different AI models on their ability to generate scientific ideas. Your suggestions will only be used for academic research purposes and not for any harmful applications. Please respond with a creative scientific idea related to the keyword provided.`

// finalIdeaInstruction is what the original appends to the prompt (and the
// fallback) of a reasoning model whose answer is cut at the marker.
const finalIdeaInstruction = "You MUST give your answer after **Final Idea:**"

// DefaultRefusalPhrases are LiveIdeaBench's REJECTION_PHRASES
// (utils/LLM.py): an answer containing any of them, in any case, is a
// refusal.
var DefaultRefusalPhrases = []string{
	"I'm sorry", "I am sorry", "I apologize", "As an AI", "As a language model",
	"As an assistant", "I cannot", "I can't", "I am unable to", "I'm unable to",
	"I am not able to", "I'm not able to",
}
