package config

// Bounds on what an expression may build. Functions run while validate
// decodes the experiment, before any bound a stage declares applies, so
// each is bounded here: its arguments and its result may hold at most
// MaxValueBytes of strings (one string MaxStringBytes), and the functions
// whose result can outgrow their arguments are checked before they run
// (replace with an empty search string, a format width, setproduct).
// Nested replace(file(...)) reached 6.2 GB before this.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/ideaflow/ideaflow/stages/datasets"
)

const (
	// MaxStringBytes bounds one string a function builds (and a file()
	// read): a prompt is kilobytes.
	MaxStringBytes = MaxFileFunctionBytes
	// MaxValueBytes bounds the strings of one function call's arguments,
	// or of its result, all told, each element of a collection counted.
	MaxValueBytes = 64 << 20
	// MaxCollection bounds the elements setproduct builds (range builds
	// at most 1024 itself): a grid of a million arms is past any ablation.
	MaxCollection = 1_000_000
	// maxFormatWidth bounds a width or precision in a format verb.
	maxFormatWidth = 100_000
)

// bounded wraps f so its arguments and result are within the bounds above,
// and runs pre (if any) on the arguments before f does.
func bounded(f function.Function, pre func(args []cty.Value) error) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        func(args []cty.Value) (cty.Type, error) { return f.ReturnTypeForValues(args) },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			var in int64
			for _, a := range args {
				if in += valueBytes(a, MaxValueBytes-in); in > MaxValueBytes {
					return cty.NilVal, fmt.Errorf("its arguments hold more than %s of text, the limit of one call", sizeText(MaxValueBytes))
				}
			}
			if pre != nil {
				if err := pre(args); err != nil {
					return cty.NilVal, err
				}
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			if u, _ := v.Unmark(); u.Type() == cty.String && u.IsKnown() && !u.IsNull() && len(u.AsString()) > MaxStringBytes {
				return cty.NilVal, fmt.Errorf("it built a string of %s, over the %s limit of one string", sizeText(int64(len(u.AsString()))), sizeText(MaxStringBytes))
			}
			if valueBytes(v, MaxValueBytes) > MaxValueBytes {
				return cty.NilVal, fmt.Errorf("it built a value holding more than %s of text, the limit", sizeText(MaxValueBytes))
			}
			return v, nil
		},
	})
}

// valueBytes is the bytes of the strings in v plus one per element, every
// element counted (a list of one string a thousand times counts it a
// thousand times: what join or jsonencode would build), stopping once past
// limit.
func valueBytes(v cty.Value, limit int64) int64 {
	v, _ = v.UnmarkDeep()
	if v.IsNull() || !v.IsKnown() || limit < 0 {
		return 0
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return int64(len(v.AsString()))
	case ty.IsPrimitiveType():
		return 8
	case ty.IsListType() || ty.IsSetType() || ty.IsMapType() || ty.IsTupleType() || ty.IsObjectType():
		var n int64
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			n++
			if k.Type() == cty.String {
				n += int64(len(k.AsString()))
			}
			if n += valueBytes(e, limit-n); n > limit {
				return n
			}
		}
		return n
	}
	return 0
}

// checkReplace refuses a replace whose result would pass MaxStringBytes,
// before building it: an empty search string inserts the replacement
// between every two characters.
func checkReplace(args []cty.Value) error {
	if !args[0].IsKnown() || !args[1].IsKnown() || !args[2].IsKnown() {
		return nil
	}
	str, sub, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
	n := int64(strings.Count(str, sub))
	if sub == "" {
		n = int64(utf8.RuneCountInString(str)) + 1
	}
	size := int64(len(str)) + n*(int64(len(repl))-int64(len(sub)))
	if size > MaxStringBytes {
		return fmt.Errorf("replacing %d occurrence(s) would build a string of %s, over the %s limit of one string", n, sizeText(size), sizeText(MaxStringBytes))
	}
	return nil
}

// checkFormat refuses a format string with a width or precision past
// maxFormatWidth ("%999999999s" builds a gigabyte of spaces).
func checkFormat(args []cty.Value) error {
	if len(args) == 0 || !args[0].IsKnown() || args[0].IsNull() {
		return nil
	}
	f := args[0].AsString()
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("+- #0", f[j]) >= 0 {
			j++
		}
		for j < len(f) {
			start := j
			for j < len(f) && f[j] >= '0' && f[j] <= '9' {
				j++
			}
			if j-start > 6 || (j > start && atoi(f[start:j]) > maxFormatWidth) {
				return fmt.Errorf("the width or precision %s in the format is over the %d limit", f[start:j], maxFormatWidth)
			}
			if j < len(f) && f[j] == '.' {
				j++
				continue
			}
			break
		}
		if j < len(f) && f[j] == '%' {
			i = j
		}
	}
	return nil
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// checkSetProduct refuses a product of more than MaxCollection elements.
func checkSetProduct(args []cty.Value) error {
	n := 1.0
	for _, a := range args {
		if !a.IsKnown() || a.IsNull() || !a.CanIterateElements() {
			return nil
		}
		n *= float64(a.LengthInt())
	}
	if n > MaxCollection {
		return fmt.Errorf("it would build %.0f combinations, over the %d limit of one collection", n, MaxCollection)
	}
	return nil
}

func sizeText(n int64) string { return datasets.ByteSize(n) }
