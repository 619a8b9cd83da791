package liveideabench

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// requestText renders a request for a golden file: each message as plain
// text, then the other fields as JSON.
func requestText(t *testing.T, req llm.Request) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "=== %s\n%s\n", m.Role, m.Content)
	}
	req.Messages = nil
	j, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "=== request\n%s\n", j)
	return b.Bytes()
}

func f64(v float64) *float64 { return &v }

var testModel = &stages.Model{Address: "model.gen", Provider: "mock", Name: "gen-model", Temperature: f64(0.7)}

func keywordsUp(items ...string) *stages.Upstream {
	u := &stages.Upstream{Address: "dataset.keywords", Type: "dataset"}
	for _, it := range items {
		u.Nodes = append(u.Nodes, stages.NodeInfo{Item: it})
	}
	u.Source = u
	return u
}

func layoutGen(t *testing.T, params stages.Params, items ...string) []stages.Node {
	t.Helper()
	p := stages.Params{"keywords": keywordsUp(items...), "model": testModel}
	for k, v := range params {
		p[k] = v
	}
	nodes, err := generateType{}.Layout(&stages.Instance{Address: `stage.generate_from_keyword.main["gen-model"]`, Params: stages.WithDefaults(generateType{}, p)})
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func callOf(t *testing.T, n stages.Node, record string) *stages.Call {
	t.Helper()
	w, err := n.Prepare([]stages.In{{Dep: n.Deps[0], Node: stages.NodeInfo{Item: n.Item}, Output: []byte(record)}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Call == nil {
		t.Fatal("not a model node")
	}
	return w.Call
}

func TestGenerateLayout(t *testing.T) {
	nodes := layoutGen(t, stages.Params{"ideas_per_keyword": 3}, "meteorology", "earthquakes")
	if len(nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(nodes))
	}
	for i, n := range nodes {
		item := []string{"meteorology", "earthquakes"}[i/3]
		if n.Item != item || n.Slot != i%3 || n.Label != fmt.Sprintf("sample %d", i%3) || !reflect.DeepEqual(n.Deps, []stages.Dep{{Input: "keywords", Index: i / 3}}) {
			t.Errorf("node %d: %+v", i, n)
		}
	}
	if got := len(layoutGen(t, nil, "a")); got != 2 {
		t.Errorf("default ideas_per_keyword: %d nodes, want 2", got)
	}
}

func TestGenerateRequestGolden(t *testing.T) {
	rec := `{"domain":"Earth science","keyword":"meteorology"}`
	tests := []struct {
		golden string
		params stages.Params
		sample int
	}{
		{"generate_default.txt", nil, 1},
		{"generate_final_idea.txt", stages.Params{"final_idea": true, "system": "You are a {{ .Domain }} researcher."}, 0},
		{"generate_no_refusals.txt", stages.Params{"refusal_phrases": []string{}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			c := callOf(t, layoutGen(t, tc.params, "meteorology")[tc.sample], rec)
			if c.Model != testModel || !reflect.DeepEqual(c.KeyParams, outputParams) {
				t.Errorf("model %v, key params %v", c.Model, c.KeyParams)
			}
			golden(t, tc.golden, requestText(t, c.Request))
		})
	}
}

// The keyword of a generic record comes from keyword_field; .Item reaches
// the rest, and a field the record lacks fails the node naming the fields
// it has.
func TestGenerateGenericRecord(t *testing.T) {
	rec := `{"id":"k7","term":"soil health","volume":"1200"}`
	nodes := layoutGen(t, stages.Params{"keyword_field": "term", "prompt": "Keyword {{ .Keyword }} ({{ .Item.volume }} searches, id {{ .ID }})."}, "k7")
	c := callOf(t, nodes[0], rec)
	if got := c.Request.Messages[0].Content; got != "Keyword soil health (1200 searches, id k7)." {
		t.Errorf("prompt %q", got)
	}
	nodes = layoutGen(t, stages.Params{"keyword_field": "term", "prompt": "{{ .Item.Volume }}"}, "k7")
	_, err := nodes[0].Prepare([]stages.In{{Node: stages.NodeInfo{Item: "k7"}, Output: []byte(rec)}})
	if err == nil || !strings.Contains(err.Error(), `.Item.Volume is not a field here; available: .Item.id .Item.term .Item.volume`) {
		t.Errorf("missing field: %v", err)
	}
	var pe *stages.ParamError
	if !errors.As(err, &pe) || pe.Param != "prompt" {
		t.Errorf("not a prompt ParamError: %#v", err)
	}
	nodes = layoutGen(t, nil, "k7")
	_, err = nodes[0].Prepare([]stages.In{{Node: stages.NodeInfo{Item: "k7"}, Output: []byte(rec)}})
	if err == nil || err.Error() != `missing field "keyword" in item "k7" (the keyword; the record has "id", "term", "volume": set keyword_field)` || !errors.Is(err, stages.ErrMissingField) {
		t.Errorf("no keyword: %v", err)
	}
}

func TestGenerateParamErrors(t *testing.T) {
	kw := keywordsUp("a")
	tests := []struct {
		params stages.Params
		param  string
		want   string
	}{
		{stages.Params{"keywords": kw}, "model", "model is required"},
		{stages.Params{"model": testModel}, "keywords", "keywords is required"},
		{stages.Params{"keywords": kw, "model": testModel, "ideas_per_keyword": 0}, "ideas_per_keyword", "ideas_per_keyword = 0 must be at least 1"},
		{stages.Params{"keywords": kw, "model": testModel, "keyword_field": ""}, "keyword_field", `keyword_field is empty; name the record field holding the keyword (default "keyword")`},
		{stages.Params{"keywords": kw, "model": testModel, "refusal_phrases": []string{"I cannot", " "}}, "refusal_phrases", "refusal_phrases[1] is blank; it would mark every answer a refusal"},
		{stages.Params{"keywords": kw, "model": testModel, "reask": " "}, "reask", "reask is empty while refusal_phrases is set; give the message to re-ask with, or set refusal_phrases = [] to turn refusal detection off"},
		{stages.Params{"keywords": kw, "model": testModel, "prompt": "{{ .Keyword"}, "prompt", "unclosed action"},
		{stages.Params{"keywords": kw, "model": testModel, "prompt": "{{ .Topic }}"}, "prompt", ".Topic is not a field here; available: .ID .Keyword .Domain .Sample .Item"},
		{stages.Params{"keywords": kw, "model": testModel, "protocol": "december"}, "protocol", `protocol = "december" is not one of "v1" (December 2024), "v2" (current)`},
		{stages.Params{"keywords": kw, "model": testModel, "reask_mode": "again"}, "reask_mode", `reask_mode = "again" is not one of "new_request"`},
		{stages.Params{"keywords": kw, "model": testModel, "final_idea_marker": "first"}, "final_idea_marker", `final_idea_marker = "first" is not one of "authors"`},
		{stages.Params{"keywords": kw, "model": testModel, "max_chars": 100}, "max_chars", "max_chars = 100 is not above min_chars = 101, so every idea would be dropped"},
	}
	for _, tc := range tests {
		_, err := generateType{}.Layout(&stages.Instance{Address: "stage.generate_from_keyword.x", Params: stages.WithDefaults(generateType{}, tc.params)})
		var pe *stages.ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %s: %s", tc.params, err, tc.param, tc.want)
		}
	}
}

func TestGenerateOutput(t *testing.T) {
	long := strings.Repeat("word ", 200)
	short := stages.Params{"min_chars": 1}                        // the shapes below are shorter than the authors' 101 characters
	chars := func(n int) string { return strings.Repeat("é", n) } // code points, as Python's len counts them
	tests := []struct {
		name   string
		params stages.Params
		answer format.Answer
		want   Idea
	}{
		{"whitespace collapsed", short, format.Answer{Text: "A  soil\n\nsensor   network."},
			Idea{Idea: "A soil sensor network.", Answer: "A  soil\n\nsensor   network.", Words: 4}},
		{"199 words kept", nil, format.Answer{Text: strings.Repeat("word ", 199)},
			Idea{Idea: strings.TrimSpace(strings.Repeat("word ", 199)), Answer: strings.Repeat("word ", 199), Words: 199}},
		{"200 words dropped", nil, format.Answer{Text: long},
			Idea{Idea: strings.TrimSpace(long), Answer: long, Words: 200, Dropped: true, Reason: "too_long"}},
		{"max_words 10", stages.Params{"max_words": 10}, format.Answer{Text: "one two three four five six seven eight nine ten"},
			Idea{Idea: "one two three four five six seven eight nine ten", Answer: "one two three four five six seven eight nine ten", Words: 10, Dropped: true, Reason: "too_long"}},
		{"too short", nil, format.Answer{Text: "Sensors."},
			Idea{Idea: "Sensors.", Answer: "Sensors.", Words: 1, Dropped: true, Reason: "too_short"}},
		{"100 characters dropped", nil, format.Answer{Text: chars(100)},
			Idea{Idea: chars(100), Answer: chars(100), Words: 1, Dropped: true, Reason: "too_short"}},
		{"101 characters kept", nil, format.Answer{Text: chars(101)},
			Idea{Idea: chars(101), Answer: chars(101), Words: 1}},
		{"2,499 characters kept", nil, format.Answer{Text: chars(2499)},
			Idea{Idea: chars(2499), Answer: chars(2499), Words: 1}},
		{"2,500 characters dropped", nil, format.Answer{Text: chars(2500)},
			Idea{Idea: chars(2500), Answer: chars(2500), Words: 1, Dropped: true, Reason: "too_long"}},
		{"characters counted after collapsing", nil, format.Answer{Text: chars(50) + "\n\n\n  " + chars(49)},
			Idea{Idea: chars(50) + " " + chars(49), Answer: chars(50) + "\n\n\n  " + chars(49), Words: 2, Dropped: true, Reason: "too_short"}},
		{"min_chars 0 keeps it", stages.Params{"min_chars": 0}, format.Answer{Text: "Sensors."},
			Idea{Idea: "Sensors.", Answer: "Sensors.", Words: 1}},
		{"final idea extracted", stages.Params{"final_idea": true, "min_chars": 1}, format.Answer{Text: "Let me think.\n\n**Final Idea:** A soil\nsensor network."},
			Idea{Idea: "A soil sensor network.", Answer: "Let me think.\n\n**Final Idea:** A soil\nsensor network.", Words: 4}},
		{"final idea without a marker: whole answer", stages.Params{"final_idea": true, "min_chars": 1}, format.Answer{Text: "A soil sensor network."},
			Idea{Idea: "A soil sensor network.", Answer: "A soil sensor network.", Words: 4}},
		{"final idea cut at the authors' first bare mention", stages.Params{"final_idea": true, "min_chars": 1}, format.Answer{Text: "My final idea will be short.\nFinal Idea - A soil sensor network."},
			Idea{Idea: "will be short. Final Idea - A soil sensor network.", Answer: "My final idea will be short.\nFinal Idea - A soil sensor network.", Words: 10}},
		{"final idea cut at the last label", stages.Params{"final_idea": true, "final_idea_marker": "last_label", "min_chars": 1}, format.Answer{Text: "My final idea will be short.\nFinal Idea - A soil sensor network."},
			Idea{Idea: "A soil sensor network.", Answer: "My final idea will be short.\nFinal Idea - A soil sensor network.", Words: 4}},
		{"marker ignored without final_idea", short, format.Answer{Text: "Hmm.\nFinal Idea: A soil sensor network."},
			Idea{Idea: "Hmm. Final Idea: A soil sensor network.", Answer: "Hmm.\nFinal Idea: A soil sensor network.", Words: 7}},
		{"refused once, then answered", short, format.Answer{Text: "A soil sensor network.", Refusal: "I'm sorry, I cannot."},
			Idea{Idea: "A soil sensor network.", Answer: "A soil sensor network.", Words: 4, Refused: true, RefusalAnswer: "I'm sorry, I cannot."}},
		{"refused twice: the fallback answer judged, as the authors", short, format.Answer{Text: "I still cannot.", Refusal: "I'm sorry, I cannot.", Refused: true},
			Idea{Idea: "I still cannot.", Answer: "I still cannot.", Words: 3, Refused: true, RefusalAnswer: "I'm sorry, I cannot.", FallbackRefused: true}},
		{"refused twice, drop_refused", stages.Params{"drop_refused": true, "min_chars": 1}, format.Answer{Text: "I still cannot.", Refusal: "I'm sorry, I cannot.", Refused: true},
			Idea{Idea: "I still cannot.", Answer: "I still cannot.", Words: 3, Refused: true, RefusalAnswer: "I'm sorry, I cannot.", FallbackRefused: true, Dropped: true, Reason: "refused"}},
	}
	rec := `{"domain":"Earth science","keyword":"soil"}`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := callOf(t, layoutGen(t, tc.params, "soil")[0], rec)
			out, err := c.Output(&tc.answer)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Keyword, tc.want.Domain = "soil", "Earth science"
			want, _ := json.Marshal(tc.want)
			if !bytes.Equal(out, want) {
				t.Errorf("output\n %s\nwant\n %s", out, want)
			}
		})
	}
}
