package format

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// parseCase is one answer and what Parse must make of it: want on success,
// or an error containing errSub (and wrapping ErrRefusal when refusal is set).
type parseCase struct {
	name    string
	spec    Spec
	text    string
	want    *Answer
	errSub  string
	refusal bool
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.spec, tc.text)
			checkParse(t, got, err, tc.want, tc.errSub, tc.refusal)
		})
	}
}

func checkParse(t *testing.T, got *Answer, err error, want *Answer, errSub string, refusal bool) {
	t.Helper()
	if want != nil {
		if err != nil {
			t.Fatalf("Parse failed: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse mismatch\n got: %#v\nwant: %#v", got, want)
		}
		return
	}
	if err == nil {
		t.Fatalf("Parse succeeded with %#v, want an error containing %q", got, errSub)
	}
	if !strings.Contains(err.Error(), errSub) {
		t.Fatalf("error %q does not contain %q", err, errSub)
	}
	if errors.Is(err, ErrRefusal) != refusal {
		t.Fatalf("errors.Is(err, ErrRefusal) = %v, want %v (err: %v)", !refusal, refusal, err)
	}
}
