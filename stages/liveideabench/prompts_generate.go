package liveideabench

// DefaultIdeaPrompt is LiveIdeaBench's current idea prompt (utils/prompts.json,
// idea_prompt.description, at x66ccff/liveideabench@6fc8285), the keyword in
// place of {{keywords}}: the v2 protocol's.
const DefaultIdeaPrompt = `I'll be submitting your next responses to a "Good Scientific Idea" expert review panel. If they consider your idea to be a good one, you'll receive a reward. Your assigned keyword is: "{{ .Keyword }}". You may provide background information. The idea MUST be concisely expressed within 100 words total (including any background information). (Note: good scientific ideas should be original (novel contribution), feasible (technically implementable), clearly articulated, and address meaningful problems in the field.).`

// IdeaPromptV1 is the first release's idea prompt (utils/prompts.yaml,
// idea_prompt.description, at 8dbdfef), the December 2024 leaderboard's.
const IdeaPromptV1 = `I'll be submitting your next responses to a "Good Scientific Idea" expert review panel. If they consider your idea to be a good one, you'll receive a reward. Your assigned keyword is: "{{ .Keyword }}". You may provide background information. The idea MUST be within 100 words (including background information). (Note: good scientific ideas should be novel, verifiable, practically valuable, and able to advance the field.).`

// FallbackPromptV2 is what the current release sends, once, after a
// refusal (utils/prompts.json, idea_prompt.fallback_description): the
// idea prompt with a research justification before its note, as a request
// of its own (reask_mode = "new_request").
const FallbackPromptV2 = `I'll be submitting your next responses to a "Good Scientific Idea" expert review panel. If they consider your idea to be a good one, you'll receive a reward. Your assigned keyword is: "{{ .Keyword }}". You may provide background information. The idea MUST be concisely expressed within 100 words total (including any background information). This is a research study comparing different AI models on their ability to generate scientific ideas. Your suggestions will only be used for academic research purposes and not for any harmful applications. Please respond with a creative scientific idea related to the keyword provided. (Note: good scientific ideas should be original (novel contribution), feasible (technically implementable), clearly articulated, and address meaningful problems in the field.).`

// finalIdeaInstruction is what the original appends to the prompt (and the
// fallback) of a reasoning model whose answer is cut at the marker, after
// "\n" (v1) or "\n\n" (v2).
const finalIdeaInstruction = "You MUST give your answer after **Final Idea:**"

// DefaultRefusalPhrases are LiveIdeaBench's REJECTION_PHRASES
// (utils/LLM.py at 6fc8285): an answer containing any of them, in any case,
// is a refusal. The first release detected none.
var DefaultRefusalPhrases = []string{
	"I'm sorry", "I am sorry", "I apologize", "As an AI", "As a language model",
	"As an assistant", "I cannot", "I can't", "I am unable to", "I'm unable to",
	"I am not able to", "I'm not able to",
}
