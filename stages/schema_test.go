package stages

import (
	"encoding/json"
	"testing"
)

func TestHasField(t *testing.T) {
	doc := `{"id":"t1", "title":"", "abstract":" x ", "n":0, "ok":false, "none":null, "refs":[{"idea":"no"}],` +
		` "q\"k":"v", "s":"a \"quoted\" \\ text", "scores":{"originality":7,"note":"  "}}`
	for path, want := range map[string]bool{
		"id": true, "title": false, "abstract": true, "n": true, "ok": true, "none": false, "refs": true,
		`q"k`: true, "s": true, "idea": false, "missing": false,
		"scores": true, "scores.originality": true, "scores.note": false, "scores.clarity": false, "id.x": false,
	} {
		if got := HasField([]byte(doc), path); got != want {
			t.Errorf("HasField(%q) = %v, want %v", path, got, want)
		}
	}
	for _, doc := range []string{`[1]`, `"x"`, ``, `{"a":`, `{"a":"unterminated}`, `{"a" 1}`} {
		if HasField([]byte(doc), "a") {
			t.Errorf("HasField(%q, a) = true", doc)
		}
	}
	if LacksField([]byte(`[]`), "value") || !LacksField([]byte(`{"count":1}`), "value") || LacksField([]byte(`{"value":0}`), "value") {
		t.Error("LacksField")
	}
}

// FuzzHasField: on any object encoding/json reads, the scanner finds a
// member exactly when encoding/json does.
func FuzzHasField(f *testing.F) {
	for _, s := range []string{`{"a":"x"}`, `{"b":[{"a":1}],"a":2}`, `{"a\\"":"]","c":{"a":"}"}}`, `{}`} {
		f.Add(s, "a")
	}
	f.Fuzz(func(t *testing.T, doc, name string) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(doc), &m) != nil {
			return
		}
		raw, ok := m[name]
		got, gotOK := member([]byte(doc), name)
		if ok != gotOK || (ok && string(compact(raw)) != string(compact(got))) {
			t.Fatalf("member(%q, %q) = %q, %v; encoding/json %q, %v", doc, name, got, gotOK, raw, ok)
		}
	})
}

func compact(b []byte) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	out, _ := json.Marshal(v)
	return out
}
