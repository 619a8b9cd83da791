package config

// Bounds on an experiment file's text, checked before it is parsed: the
// parser recurses once per nesting level and a binary file gives one
// diagnostic per byte, so neither may reach it.

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxExperimentFileBytes bounds one .hcl file: an experiment with its
// prompts inline is tens of kilobytes.
const MaxExperimentFileBytes = 4 << 20

// MaxNesting bounds how deeply brackets, braces, parentheses, quotes and
// template sequences nest in an experiment file. HCL's parser recurses per
// level, and 100,000 nested parentheses overflowed the stack (a fatal error,
// not a diagnostic); real experiments nest a handful of levels.
const MaxNesting = 256

// checkSource refuses a file that is not UTF-8 text (a NUL byte counts as
// binary) or nests past MaxNesting, with one located diagnostic.
func checkSource(name string, src []byte) *hcl.Diagnostic { return checkText(name, src, false) }

// checkText is checkSource for a configuration file, or (template) for a
// templatefile() template.
func checkText(name string, src []byte, template bool) *hcl.Diagnostic {
	at := func(off int, summary, detail string) *hcl.Diagnostic {
		line := bytes.Count(src[:off], []byte("\n")) + 1
		col := off - (bytes.LastIndexByte(src[:off], '\n') + 1) + 1
		pos := hcl.Pos{Line: line, Column: col, Byte: off}
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail,
			Subject: &hcl.Range{Filename: name, Start: pos, End: pos}}
	}
	for off := 0; off < len(src); {
		r, size := utf8.DecodeRune(src[off:])
		if (r == utf8.RuneError && size == 1) || r == 0 {
			return at(off, "Not a text file",
				fmt.Sprintf("byte 0x%02x is not UTF-8 text: an experiment file is UTF-8 HCL. Is %s a binary file? Give the experiment's .hcl files only.", src[off], name))
		}
		off += size
	}
	lex := hclsyntax.LexConfig
	if template {
		lex = hclsyntax.LexTemplate
	}
	toks, _ := lex(src, name, hcl.InitialPos)
	depth := 0
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenOQuote,
			hclsyntax.TokenOHeredoc, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			depth++
			if depth > MaxNesting {
				d := at(t.Range.Start.Byte, "Expression nested too deeply",
					fmt.Sprintf("This file nests brackets, parentheses, braces, quotes and template sequences more than %d levels deep, the limit. Flatten the expression (a local for an inner part).", MaxNesting))
				return d
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCQuote,
			hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
