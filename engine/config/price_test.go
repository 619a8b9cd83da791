package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const priceModel = `provider "mock" {
  kind = "mock"
}
model "m" {
  provider = provider.mock
  name     = "m"
  price {
%s
  }
}
`

// TestPriceBlock: the batch and cached-input prices decode when given,
// stay unset (nil, not 0) when not, and are bounded like the others, at
// the attribute's range (validate prints it file:line:col) with a fix.
func TestPriceBlock(t *testing.T) {
	exp, _ := loadSource(t, strings.Replace(priceModel, "%s", `    input_per_mtok              = 0.15
    output_per_mtok             = 0.6
    batch_input_per_mtok        = 0.075
    batch_output_per_mtok       = 0.3
    cached_input_per_mtok       = 0.075
    batch_cached_input_per_mtok = 0`, 1))
	p := exp.Models["m"].Price
	if p.InputPerMTok != 0.15 || p.OutputPerMTok != 0.6 || p.BatchInputPerMTok == nil || *p.BatchInputPerMTok != 0.075 ||
		*p.BatchOutputPerMTok != 0.3 || *p.CachedInputPerMTok != 0.075 || p.BatchCachedInputPerMTok == nil || *p.BatchCachedInputPerMTok != 0 {
		t.Fatalf("price %+v", p)
	}
	exp, _ = loadSource(t, strings.Replace(priceModel, "%s", "    input_per_mtok = 1\n    output_per_mtok = 2", 1))
	if p := exp.Models["m"].Price; p.BatchInputPerMTok != nil || p.BatchOutputPerMTok != nil || p.CachedInputPerMTok != nil || p.BatchCachedInputPerMTok != nil {
		t.Fatalf("unset discounts decoded as %+v", p)
	}

	for _, tt := range []struct{ attr, want string }{
		{"batch_input_per_mtok = -1", "exp.hcl:9,28-30: Invalid batch_input_per_mtok; batch_input_per_mtok must be between 0 and 10000, got -1. Fix the value."},
		{"cached_input_per_mtok = 1e9", "exp.hcl:9,29-32: Invalid cached_input_per_mtok; cached_input_per_mtok must be between 0 and 10000, got 1e+09. Fix the value."},
		{"batch_output_per_mtok = \"x\"", "exp.hcl:9,29-32: Wrong type for batch_output_per_mtok"},
		{"batch_price = 1", "exp.hcl:9,5-16: Unsupported argument"},
	} {
		path := filepath.Join(t.TempDir(), "exp.hcl")
		src := strings.Replace(priceModel, "%s", "    input_per_mtok = 1\n    "+tt.attr, 1) + "report \"r\" {}\n"
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, diags := Load(path, Options{})
		if len(diags) != 1 || !strings.Contains(diags.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.attr, diags, tt.want)
		}
	}
}
