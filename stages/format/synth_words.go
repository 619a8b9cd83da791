package format

// Phrase banks for synthetic answers. The sentences are generic on purpose:
// the mock provider only needs text that reads like an answer, mentions the
// topic and varies between samples, never text that could pass for real output.

var (
	titleAdjectives = []string{"Adaptive", "Causal", "Multiscale", "Federated", "Physics-informed", "Longitudinal",
		"Graph-based", "Self-supervised", "Uncertainty-aware", "Low-cost", "Interpretable", "Closed-loop"}
	titleNouns = []string{"profiling", "modelling", "screening", "benchmarking", "mapping", "inference",
		"design", "sensing", "forecasting", "stratification", "monitoring", "perturbation analysis"}
	goalVerbs = []string{"study", "probe", "map", "quantify", "model", "explain", "predict", "stress-test"}
	methods   = []string{"combining public cohort data with a small targeted experiment",
		"pairing a mechanistic model with a learned correction term",
		"contrasting matched samples collected under two controlled conditions",
		"building a shared embedding of text, images and measurements",
		"running a staged perturbation screen with pooled readouts",
		"fitting a hierarchical model across sites and time points"}
	limitations = []string{"single-site datasets", "coarse averages over heterogeneous samples",
		"correlational evidence", "hand-tuned thresholds", "short observation windows", "simulations that are never validated"}
	consequences = []string{"hides effects that only appear in small subgroups",
		"makes it hard to tell cause from confounding", "limits how far findings transfer to new settings",
		"leaves the dominant sources of error unmeasured"}
	coreSteps = []string{"The core step estimates how each factor shifts the outcome and ranks the factors by effect size",
		"The key step learns a compact representation and tests which of its components predict the outcome",
		"The central step fits the model on one cohort and checks its predictions on a second, independent cohort",
		"The main step perturbs one component at a time and records the response with repeated measurements"}
	evaluations = []string{"against the strongest published baseline using held-out data and preregistered metrics",
		"with ablations that remove each component in turn and report calibrated error bars",
		"on two external datasets, comparing accuracy, cost and robustness to missing data",
		"through a blinded comparison with expert judgements on a sample of cases"}
	impacts = []string{"researchers would gain a practical tool to design sharper follow-up experiments",
		"the results would show which interventions deserve large, expensive trials",
		"the framework would transfer to neighbouring problems with little extra effort",
		"practitioners would get earlier and more reliable warnings than current methods give"}
	feasibility = []string{"A six-month pilot on existing data would test feasibility before any new collection.",
		"All components rely on tools and datasets that are already openly available.",
		"The main risk is data quality, which a small validation study can check early."}

	rationales = []string{"it states a clearer mechanism", "its evaluation plan is more concrete",
		"it departs further from standard practice", "it needs fewer unproven assumptions",
		"its expected impact is broader", "it defines its measurements more precisely"}
	ratingReasons = []string{"Both texts address %s and share the main research question, but they differ in method and evaluation.",
		"The idea and the abstract overlap on %s, although the abstract tests a narrower hypothesis with different data.",
		"There is little overlap: the idea mentions %s, but its question, method and expected result differ from the abstract."}
	preambles = []string{"Here are %d research ideas on %s:", "Based on the references, here are %d ideas about %s:",
		"Sure. Below are %d proposals related to %s."}
	outros = []string{"These ideas could be pursued independently or combined into a larger programme.",
		"Let me know if you would like more detail on any of them.",
		"Each of these directions can start with data that is already available."}
)
