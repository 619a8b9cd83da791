package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const genSample = `stage.generate_ideas.main["gen-a"]/qs-membrane/sample 0`

// showJSON runs `show --json` and decodes its nodes.
func showJSON(t *testing.T, args ...string) []engine.NodeView {
	t.Helper()
	code, stdout, stderr := cli(t, append([]string{"show", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("show %v: exit %d\n%s", args, code, stderr)
	}
	var views []engine.NodeView
	if err := json.Unmarshal([]byte(stdout), &views); err != nil {
		t.Fatalf("decode show --json: %v\n%s", err, stdout)
	}
	return views
}

// sentAs finds the server's requests whose messages are msgs, for model.
func sentAs(srv *llmtest.Server, model string, msgs []llm.Message) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if r.Chat == nil || r.Chat.Model != model || len(r.Chat.Messages) != len(msgs) {
			continue
		}
		same := true
		for i, m := range r.Chat.Messages {
			same = same && m.Role == msgs[i].Role && m.Content == msgs[i].Content
		}
		if same {
			out = append(out, r)
		}
	}
	return out
}

// show of a model node prints the request the server received, message by
// message, the raw answer the server sent and the ideas parsed from it.
func TestShowModelNode(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	before := srv.Count()

	views := showJSON(t, genSample, exp, "--cache-dir", cacheDir)
	if len(views) != 1 || views[0].Request == nil || views[0].Result == nil {
		t.Fatalf("show --json: %+v", views)
	}
	v := views[0]
	sent := sentAs(srv, "gen-a", v.Request.Messages)
	if len(sent) == 0 {
		t.Fatalf("the server received no request with the messages shown:\n%+v", v.Request.Messages)
	}
	chat := sent[0].Chat
	if chat.Temperature != 0.8 || chat.MaxTokens != 300 || *v.Request.Temperature != 0.8 || v.Request.MaxTokens != 300 {
		t.Errorf("sampling: sent temperature %v max_tokens %d; shown %v %d", chat.Temperature, chat.MaxTokens, *v.Request.Temperature, v.Request.MaxTokens)
	}
	raw := responder(chat)
	var out struct{ Ideas []string }
	if err := json.Unmarshal(v.Result.Output, &out); err != nil || len(out.Ideas) != 1 || out.Ideas[0] != raw {
		t.Errorf("output %s (err %v); the answer was %q", v.Result.Output, err, raw)
	}
	if v.Result.Raw != raw || v.Result.Model != "gen-a" || v.Result.ServedModel != "gen-a" || v.Result.Fingerprint != "fp_llmtest" {
		t.Errorf("result %+v", v.Result)
	}

	code, stdout, stderr := cli(t, "show", genSample, exp, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("show: exit %d\n%s", code, stderr)
	}
	var req strings.Builder
	req.WriteString("request (provider fake):\n  model:       gen-a\n  temperature: 0.8\n  top_p:       unset\n  max_tokens:  300\n  seed:        unset\n  sample:      0\n  format:      {\"kind\":\"ideas\",\"n\":1}\n")
	for _, m := range chat.Messages {
		req.WriteString("--- " + m.Role + " ---\n" + m.Content + "\n")
	}
	req.WriteString("--- end ---\n")
	ideas, _ := json.Marshal(raw)
	for _, want := range []string{
		genSample + "\n  stage:     generate_ideas@1 (instance stage.generate_ideas.main[\"gen-a\"], key \"gen-a\")\n  status:    cached\n  work:      call\n  key:       " + v.Key + "\n  inputs:    stage.filter_references.low/qs-membrane\n  generator: gen-a\n",
		"\n" + req.String() + "\nanswer (raw):\n" + raw + "\n\noutput:\n  {\n    \"ideas\": [\n      " + string(ideas) + "\n    ]\n  }\n",
		"  model:       gen-a, served by gen-a, fingerprint fp_llmtest\n",
		"  attempts:    1\n    1. ask (",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show does not print\n%s\nin\n%s", want, stdout)
		}
	}
	// Key parts are aligned on the longest name, whatever parts there are.
	for _, re := range []string{
		`\nkey parts:\n  stage +generate_ideas@1\n  model +gen-a\n  prompt +sha256:[0-9a-f]{16}…\n`,
		`\n  model\.temperature +0\.8\n`,
		`\n  sample +0\n`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("show does not print %s in\n%s", re, stdout)
		}
	}
	if srv.Count() != before {
		t.Errorf("show made %d requests", srv.Count()-before)
	}

	// An item is its every node, in sample order.
	views = showJSON(t, `stage.generate_ideas.main["gen-a"]/qs-membrane`, exp, "--cache-dir", cacheDir)
	var got []string
	for _, v := range views {
		got = append(got, v.Label)
	}
	if want := []string{"sample 0", "sample 1", "sample 2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("item: labels %v, want %v", got, want)
	}
}

// show of a failed node prints the failure the run recorded.
func TestShowFailedNode(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		if rankInstruction.MatchString(r.Chat.Messages[len(r.Chat.Messages)-1].Content) {
			return llmtest.Fault{Status: 400, Message: "context length exceeded"}, true
		}
		return llmtest.Fault{}, false
	})
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != exitFailedNodes {
		t.Fatalf("run: exit %d, want 1\n%s", code, stderr)
	}
	addr := `stage.rank_ideas.novelty["gen-a"]/qs-membrane/perm 0`
	code, stdout, stderr := cli(t, "show", addr, exp, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("show: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"  status:    to run: failed last run (",
		"  work:      call\n",
		"\nrequest (provider fake):\n  model:       judge-model\n",
		"\nlast run failed (",
		"  attempts:    1\n    1. ask (",
		"context length exceeded",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show does not print %q in\n%s", want, stdout)
		}
	}
	views := showJSON(t, addr, exp, "--cache-dir", cacheDir)
	if f := views[0].Failure; f == nil || !strings.Contains(f.Error, "context length exceeded") || views[0].Result != nil {
		t.Errorf("failure %+v, result %+v", f, views[0].Result)
	}
}

func TestShowUnknownAddress(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	tests := []struct {
		address string
		stderr  string
	}{
		{`stage.generate_ideas.main["gen-a"]/qs-membrane/sample 9`,
			`ideaflow: exp: no node, item or stage instance at stage.generate_ideas.main["gen-a"]/qs-membrane/sample 9; did you mean stage.generate_ideas.main["gen-a"]/qs-membrane/sample 0 or stage.generate_ideas.main["gen-a"]/qs-membrane/sample 1 or stage.generate_ideas.main["gen-a"]/qs-membrane/sample 2?` + "\n"},
		{`stage.rank_idea.novelty`,
			`ideaflow: exp: no node, item or stage instance at stage.rank_idea.novelty; did you mean stage.rank_ideas.novelty?` + "\n"},
		{`model.judge`, `ideaflow: exp: no node, item or stage instance at model.judge` + "\n"},
	}
	for _, tc := range tests {
		code, stdout, stderr := cli(t, "show", tc.address, exp, "--cache-dir", cacheDir)
		if code != exitBadInput || stdout != "" || stderr != tc.stderr {
			t.Errorf("show %s: exit %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", tc.address, code, stdout, stderr, tc.stderr)
		}
	}
}

// show of a node not in the cache says why it must run, and still shows the
// request it will send when its inputs are cached.
func TestShowNodeNotInCache(t *testing.T) {
	srv, exp, cacheDir, sc := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	sc.N = 4
	writeExperiment(t, exp, sc)
	before := srv.Count()
	tests := []struct {
		address string
		want    []string
	}{
		{`stage.generate_ideas.main["gen-a"]/qs-membrane/sample 3`, []string{"  status:    to run: new\n", "\nrequest (provider fake):\n  model:       gen-a\n", "  sample:      3\n", "\nkey parts:\n"}},
		{`stage.rank_ideas.novelty["gen-a"]/qs-membrane/perm 0`, []string{"  status:    to run: upstream will run\n"}},
	}
	for _, tc := range tests {
		code, stdout, stderr := cli(t, "show", tc.address, exp, "--cache-dir", cacheDir)
		if code != 0 {
			t.Fatalf("show %s: exit %d\n%s", tc.address, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("show %s does not print %q in\n%s", tc.address, w, stdout)
			}
		}
		if strings.Contains(stdout, "answer (raw)") {
			t.Errorf("show %s prints an answer for a node not in the cache:\n%s", tc.address, stdout)
		}
	}
	if srv.Count() != before {
		t.Errorf("show made %d requests", srv.Count()-before)
	}
}

// show says how a node reads, as its stage type presents it: a generation
// as its idea, a panel judgement as who judged what with which scores (the
// judge's numbers as the tables print them); --json carries the same under
// "reads_as".
func TestShowReadsAs(t *testing.T) {
	exp := "../../experiments/liveideabench/quick.hcl"
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir()); code != 0 {
		t.Fatal(stderr)
	}
	judge := `stage.judge_panel.scores["mock-generator-a"]/perovskite solar cells/sample 0 judge mock-judge-b`
	code, stdout, stderr := cli(t, "show", judge, exp, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("show: exit %d\n%s", code, stderr)
	}
	views := showJSON(t, judge, exp, "--cache-dir", cacheDir)
	var o struct {
		Scores map[string]int `json:"scores"`
		Mean   float64        `json:"mean"`
	}
	if err := json.Unmarshal(views[0].Result.Output, &o); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("\nreads as:\n  judgement: judge_panel.scores by mock-judge-b, score %s (clarity %d, feasibility %d, originality %d)\n",
		stages.FormatNumber(o.Mean, 3), o.Scores["clarity"], o.Scores["feasibility"], o.Scores["originality"])
	if !strings.Contains(stdout, want) {
		t.Errorf("show lacks %q:\n%s", want, stdout)
	}
	code, stdout, _ = cli(t, "show", "--json", judge, exp, "--cache-dir", cacheDir)
	var shown []struct {
		Reads struct {
			Judgements []stages.Judgement `json:"judgements"`
			Ideas      []stages.Idea      `json:"ideas"`
			Rows       int                `json:"export_rows"`
		} `json:"reads_as"`
	}
	if err := json.Unmarshal([]byte(stdout), &shown); err != nil || code != 0 || len(shown) != 1 {
		t.Fatalf("show --json: exit %d, %v\n%s", code, err, stdout)
	}
	if r := shown[0].Reads; len(r.Judgements) != 1 || r.Judgements[0].Judge != "mock-judge-b" || r.Judgements[0].Dimension != "judge_panel.scores" ||
		len(r.Judgements[0].Scores) != 3 || len(r.Ideas) != 0 || r.Rows != 1 {
		t.Errorf("reads_as %+v", r)
	}

	idea := `stage.generate_from_keyword.ideas["mock-generator-a"]/perovskite solar cells/sample 0`
	code, stdout, stderr = cli(t, "show", idea, exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "\nreads as:\n  idea 0: ") || strings.Contains(stdout, "judgement:") {
		t.Errorf("show of a generation: exit %d, %s\n%s", code, stderr, stdout)
	}
}
