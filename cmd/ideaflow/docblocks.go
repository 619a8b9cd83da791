package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ideaflow/ideaflow/engine/config"
)

// The experiment language's blocks, as engine/config decodes them
// (config.BlockKinds): what each block is and what each attribute of a
// fixed schema means. Stage, report and provider bodies are documented from
// their registries (stage types, provider kinds) below. TestBlockDocsCoverTheDecoder
// fails when the decoder knows a block kind or attribute with no doc here.

// blockDoc says what one block kind is.
type blockDoc struct {
	about string
	attrs map[string]string
}

var blockDocs = map[string]blockDoc{
	"variable": {
		about: "`variable \"NAME\" { ... }` is a value set from the command line (`-var NAME=VALUE`, `-var-file FILE`) and read as `var.NAME`.",
		attrs: map[string]string{
			"default":     "the value when none is given; without one the variable must be given",
			"description": "what the variable is for, for whoever sets it",
			"type":        "a type constraint (string, number, bool, list(string), ...); a -var value of a string variable is taken as written",
		},
	},
	"locals": {
		about: "`locals { NAME = EXPR ... }` names expressions, read as `local.NAME`; any names, evaluated in dependency order.",
	},
	"provider": {
		about: "`provider \"NAME\" { kind = \"KIND\" ... }` is an endpoint models and services are called through, read as `provider.NAME`; its other attributes are its kind's settings (see [Provider kinds](#provider-kinds)).",
		attrs: map[string]string{
			"kind": "the provider kind (openai, mock, ...): which settings the block takes",
		},
	},
	"model": {
		about: "`model \"NAME\" { ... }` is one model at a provider with its sampling, read as `model.NAME` by stage params of kind model.",
		attrs: map[string]string{
			"provider":         "the provider it is called through (provider.NAME)",
			"name":             "the model's name at the provider, sent with every request",
			"family":           "a group of related models (a base and its fine-tunes), for panels that exclude a generator's family",
			"temperature":      "sampling temperature, 0 to 2; unset: the provider's default",
			"top_p":            "nucleus sampling, 0 to 1; unset: the provider's default",
			"max_tokens":       "the completion budget of each call; 0 or unset: none sent",
			"seed":             "sent with each call; sample s of an item sends seed + s, so independent samples are distinct requests; unset: none sent",
			"stop":             "stop sequences (a list of strings)",
			"json_mode":        "ask for a JSON object answer (response_format json_object)",
			"knowledge_cutoff": "YYYY-MM-DD, the end of the model's training data: plan warns about targets published before it",
		},
	},
	"dataset": {
		about: "`dataset \"NAME\" { ... }` is a file or folder of items, read as `dataset.NAME` by stage inputs (see [Dataset formats](#dataset-formats)).",
		attrs: map[string]string{
			"format":         "the dataset format (jsonl, ideabench, ...)",
			"path":           "the file or folder, relative to the experiment file",
			"id_field":       "the field (jsonl) or column (csv) holding each item's id; default \"id\" (the IdeaBench formats have a fixed one)",
			"limit":          "keep only the first N items (0: all); items past it are not read",
			"references":     "a references file (CSV or JSONL) joined to the targets of an ideabench-targets-csv dataset",
			"min_references": "keep only targets with at least this many references (IdeaBench formats; 0: all)",
			"sample":         "keep a seeded random sample of N items (0: all)",
			"sample_seed":    "the seed of sample",
			"categories":     "a keyword,category file labelling a keyword format's items with their domain",
		},
	},
	"quality": {
		about: "`quality \"NAME\" { ... }` is a quality indicator judges rate ideas on (novelty, feasibility, ...), read as `quality.NAME`.",
		attrs: map[string]string{
			"definition": "the sentence the judging prompts give for it",
			"name":       "the name prompts and tables show (default: the block's label)",
		},
	},
	"stage": {
		about: "`stage \"TYPE\" \"NAME\" { ... }` is one step of the workflow, read as `stage.TYPE.NAME`; `for_each` makes one instance per element; the other attributes are its type's parameters (see [Stage types](#stage-types)).",
	},
	"report": {
		about: "`report \"NAME\" { ... }` writes tables and figures from stage outputs, read as `report.NAME`; its attributes are the `report` stage type's parameters.",
	},
	"expect": {
		about: "`expect \"NAME\" { ... }` sets a published number beside the one a run computed, with the tolerance within which it counts as reproduced (`ideaflow check` prints each verdict), read as `expect.NAME`; its attributes are the `expect` stage type's parameters.",
	},
	"settings": {
		about: "`settings { ... }` holds experiment-wide limits; at most one per experiment.",
		attrs: map[string]string{
			"max_nodes": fmt.Sprintf("the node budget of a plan (default %d): a plan that would lay out more fails at the stage that passed it", config.DefaultMaxNodes),
			"name":      "the experiment's name in every output (default: its file's or folder's name); plan compares a run with the last one of that name",
		},
	},
	"stop_when": {
		about: "`stop_when { ... }` makes the run adaptive: the items of one dataset are taken in a seeded random order, `round` at a time, and after each round anytime-valid confidence sequences of every model's mean score decide whether the answer is known; at most one per experiment.",
		attrs: map[string]string{
			"items":      "the dataset taken in rounds (`dataset.keywords`); it must not set `sample` itself",
			"scores":     "the stage block whose nodes score each item, one instance per model (`stage.judge_panel.main`)",
			"round":      "items added per round",
			"seed":       "orders the items (default 0); round k's items are a prefix of round k+1's, so later rounds and raised targets reuse the cache",
			"separated":  "stop once every pair of models is separated (intervals disjoint) or tied, at this board-wide confidence level (e.g. 0.95)",
			"tie":        "with separated: a pair whose intervals allow no difference of means as large as this counts as tied",
			"half_width": "stop once every model's interval is narrower than twice this",
			"max_calls":  "stop once the run has spent this many calls",
			"method":     "the confidence sequence: \"bernstein\" (empirical Bernstein, default) or \"betting\" (tighter, slower); Waudby-Smith & Ramdas 2023",
			"range":      "the scores' bounds, [lowest, highest] (default [1, 10])",
			"field":      "the output field read as a node's score (default \"mean\")",
		},
	},
}

// priceDocs documents a model's price block.
var priceDocs = map[string]string{
	"input_per_mtok":              "US dollars per million input tokens",
	"output_per_mtok":             "US dollars per million output tokens",
	"batch_input_per_mtok":        "the same in a batch (unset: input_per_mtok, so a cost is never under-estimated)",
	"batch_output_per_mtok":       "the same in a batch (unset: output_per_mtok)",
	"cached_input_per_mtok":       "per million prompt tokens served from the provider's cache (unset: input_per_mtok)",
	"batch_cached_input_per_mtok": "the same, in a batch (unset: the batch input price)",
}

func writeBlocks(w io.Writer) {
	fmt.Fprintln(w, "## Blocks")
	fmt.Fprintln(w)
	var kinds []string
	for _, k := range config.BlockKinds() {
		kinds = append(kinds, "`"+k.Type+"`")
	}
	fmt.Fprintf(w, "An experiment is one .hcl file or a folder of them; its top-level blocks are %s. Anything else is an error.\n", strings.Join(kinds, ", "))
	for _, k := range config.BlockKinds() {
		fmt.Fprintln(w)
		writeBlock(w, k)
	}
}

func writeBlock(w io.Writer, k config.BlockKind) {
	d := blockDocs[k.Type]
	fmt.Fprintf(w, "### `%s`\n\n%s\n", k.Type, d.about)
	if len(k.Attributes) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| attribute | required | description |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, a := range k.Attributes {
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", a.Name, yes(a.Required), cell(d.attrs[a.Name]))
	}
	for _, b := range k.Blocks {
		if b != "price" {
			continue
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "A `price { ... }` block inside gives the model's price, for cost estimates and totals:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| attribute | description |")
		fmt.Fprintln(w, "|---|---|")
		for _, a := range config.PriceAttributes() {
			fmt.Fprintf(w, "| `%s` | %s |\n", a, cell(priceDocs[a]))
		}
	}
}

// blockTopic finds a block kind by its type name ("model", "settings").
func blockTopic(topic string) (config.BlockKind, bool) {
	for _, k := range config.BlockKinds() {
		if k.Type == topic {
			return k, true
		}
	}
	return config.BlockKind{}, false
}
