package config

// What `ideaflow doc` reads of the decoder's schemas, so the reference of
// the experiment language's blocks cannot drift from what Load accepts: a
// block kind or attribute added here without its doc fails cmd/ideaflow's
// doc test.

// BlockKind is one top-level block kind as the decoder knows it.
type BlockKind struct {
	Type   string
	Labels []string // the block's label names ("type", "name")
	// Attributes lists a fixed schema's attributes in declaration order;
	// nil for stage and report (their type's params), provider (its
	// kind's settings) and locals (any names).
	Attributes []BlockAttribute
	Blocks     []string // nested block types (model's price)
}

// BlockAttribute is one attribute of a fixed schema.
type BlockAttribute struct {
	Name     string
	Required bool
}

// BlockKinds returns every top-level block kind Load decodes, in the order
// topLevelHint names them.
func BlockKinds() []BlockKind {
	out := make([]BlockKind, 0, len(rootSchema.Blocks))
	for _, b := range rootSchema.Blocks {
		k := BlockKind{Type: b.Type, Labels: b.LabelNames}
		if s, ok := blockSchemas[b.Type]; ok {
			for _, a := range s.Attributes {
				k.Attributes = append(k.Attributes, BlockAttribute{Name: a.Name, Required: a.Required})
			}
			for _, nb := range s.Blocks {
				k.Blocks = append(k.Blocks, nb.Type)
			}
		}
		if b.Type == "provider" {
			// Every kind takes these before its own settings (providers.go).
			k.Attributes = []BlockAttribute{{Name: "kind", Required: true}}
		}
		out = append(out, k)
	}
	return out
}

// PriceAttributes are the attributes of a model's price block.
func PriceAttributes() []string {
	out := make([]string, len(priceSchema.Attributes))
	for i, a := range priceSchema.Attributes {
		out[i] = a.Name
	}
	return out
}
