package datasets

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// stdDecode is decodeStrict with encoding/json alone: the reference the fast
// path must agree with.
func stdDecode(text []byte, v any, disallowUnknown bool) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if disallowUnknown {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return errMore
	}
	return nil
}

var errMore = &json.SyntaxError{}

// TestDecodeStrictAgreesWithEncodingJSON: the fast decoder accepts and
// refuses the lines encoding/json does, and decodes the same values.
func TestDecodeStrictAgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		`{"id":"t1","title":"T","abstract":"A","references":[{"id":"r1","title":"R","abstract":"B","citations":5,"types":["Review"],"intents":["background"]}]}`,
		`{"id":"t1","abstract":"A","year":2024,"keywords":["x","y"]}`,
		`{"id":"t1","abstract":"A","bogus":1}`,
		`{"id":"t1","abstract":"A"} {"id":"t2"}`,
		`{"id":"t1","abstract":"A"}   `,
		`{"id":1,"abstract":"A"}`,
		`{"id":"t1","abstract":"A","year":"2024"}`,
		`{"id":"t1","abstract":"A","year":2024.5}`,
		`{"id":"t1","abstract":"A","references":[{"id":"r1","citations":"5"}]}`,
		`{"id":"t1","abstract":"A",}`,
		`{"id":"t1","abstract":"A"`,
		`null`,
		`[]`,
		`{"ID":"t1","Abstract":"A"}`,
		`{"id":"t\u00e9\n","abstract":"\"quoted\""}`,
		`{"id":"t1","id":"t2","abstract":"A"}`,
	}
	for _, line := range lines {
		for _, strict := range []bool{true, false} {
			var fast, std Paper
			errFast := decodeStrict([]byte(line), &fast, strict)
			errStd := stdDecode([]byte(line), &std, strict)
			if (errFast == nil) != (errStd == nil) {
				t.Errorf("%s (strict %v): decodeStrict error %v, encoding/json error %v", line, strict, errFast, errStd)
				continue
			}
			if errFast == nil && !reflect.DeepEqual(fast, std) {
				t.Errorf("%s: decodeStrict gave %+v, encoding/json %+v", line, fast, std)
			}
			var fm, sm map[string]any
			errFast = decodeStrict([]byte(line), &fm, false)
			errStd = stdDecode([]byte(line), &sm, false)
			if (errFast == nil) != (errStd == nil) {
				t.Errorf("%s (map): decodeStrict error %v, encoding/json error %v", line, errFast, errStd)
			} else if errFast == nil && !reflect.DeepEqual(fm, sm) {
				t.Errorf("%s (map): decodeStrict gave %#v, encoding/json %#v", line, fm, sm)
			}
		}
	}
}
