package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// redacted is what a masked secret reads (httpcall.Redacted, internal to stages).
const redacted = "[REDACTED]"

// keyFragment reports an 8-byte fragment of key that s holds, in the key's
// own bytes or in its encoding/json spelling (how a record would store it),
// in s as it is or with its JSON escapes decoded, once or twice (a reader
// decodes \u0073 at sight).
func keyFragment(s []byte, key string) (string, bool) {
	for _, text := range [][]byte{s, unescapeAll(s), unescapeAll(unescapeAll(s))} {
		for _, k := range []string{key, jsonInner(key)} {
			for i := 0; i+8 <= len(k); i++ {
				if bytes.Contains(text, []byte(k[i:i+8])) {
					return k[i : i+8], true
				}
			}
		}
	}
	return "", false
}

var jsonEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}|\\[\\/"]`)

// unescapeAll decodes every \uXXXX, \\, \/ and \" in b, wherever it stands.
func unescapeAll(b []byte) []byte {
	return jsonEscape.ReplaceAllFunc(b, func(m []byte) []byte {
		if len(m) == 2 {
			return m[1:]
		}
		r, _ := strconv.ParseUint(string(m[2:]), 16, 32)
		return []byte(string(rune(r)))
	})
}

func jsonInner(s string) string {
	q := jsonString(s)
	return q[1 : len(q)-1]
}

// TestEscapedKeyEchoNeverPersisted: an endpoint that echoes the request's
// headers in every answer, the key spelled a different way each time (\u
// escapes of every or every other character, either case of hex, escaped
// slashes, Gson's \u003d, nested JSON), through a whole run at debug log
// level. No 8 bytes of the key reach the output, the logs, any file the run
// wrote, a cache record read back, a bundle, or `show`; and `show` prints
// the mask where the echo was.
func TestEscapedKeyEchoNeverPersisted(t *testing.T) {
	const key = "sk-Q7xv/CANARY+5f1e='9b<7c=="
	srv := llmtest.New(llmtest.WithResponder(responder), llmtest.WithAPIKey(key))
	defer srv.Close()
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		return llmtest.Fault{EchoHeaders: true, EchoSpelling: llmtest.Spellings[r.Seq%len(llmtest.Spellings)]}, true
	})
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	cacheDir := filepath.Join(dir, "cache")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "CANARY_API_KEY", Generators: []string{"gen-a"}, N: 2, Limit: 5})
	t.Setenv("CANARY_API_KEY", key)
	var out bytes.Buffer
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--log-level", "debug", "--log-format", "json",
		"--summary-json", filepath.Join(dir, "summary.json"), "--out", filepath.Join(dir, "results"))
	out.WriteString(stdout + stderr)
	if code != 0 && code != 1 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if srv.Count() < len(llmtest.Spellings) {
		t.Fatalf("%d requests: not every spelling was sent", srv.Count())
	}
	code, stdout, stderr = cli(t, "show", genSample, exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, redacted) {
		t.Fatalf("show: exit %d, the echo does not read %s\n%s\n%s", code, redacted, stdout, stderr)
	}
	out.WriteString(stdout + stderr)
	if frag, ok := keyFragment(out.Bytes(), key); ok {
		t.Errorf("CLI output, logs or show hold %q of the key", frag)
	}

	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if frag, ok := keyFragment(b, key); ok {
			t.Errorf("%s holds %q of the key", p, frag)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.OpenReadOnly(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n := 0
	err = store.List(func(e cache.Entry) error {
		n++
		rec, err := store.Get(e.Key)
		if err != nil {
			return err
		}
		f, _ := store.Failure(e.Key)
		if frag, ok := keyFragment([]byte(jsonString(rec)+jsonString(f)), key); ok {
			t.Errorf("cache record %s holds %q of the key", e.Key, frag)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("%d records read: %v", n, err)
	}
	var bundle bytes.Buffer
	if _, err := store.Export(&bundle, nil); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&bundle)
	if err != nil {
		t.Fatal(err)
	}
	inflated, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if frag, ok := keyFragment(inflated, key); ok {
		t.Errorf("the bundle holds %q of the key", frag)
	}
	if !bytes.Contains(inflated, []byte(redacted)) {
		t.Error("the bundle holds no masked echo: the test searched nothing")
	}
}

// hostileServiceExperiment is serviceExperiment with one retry a call.
var hostileServiceExperiment = strings.Replace(strings.Replace(serviceExperiment,
	"max_batch   = 8\n", "max_batch   = 8\n  max_retries = 1\n", 1),
	"kind     = \"tei\"\n", "kind     = \"tei\"\n  max_retries = 1\n", 1)

// TestBadVectorsFailTheRun: an embeddings endpoint that sends zero vectors
// and a TEI server that sends a token vector a component short fail their
// nodes, each after its retry, with a message saying why; the run exits 1
// with nothing cached for them; once the servers answer well, the next run
// asks for exactly those nodes. Never a score computed from bad vectors.
func TestBadVectorsFailTheRun(t *testing.T) {
	emb := llmtest.New()
	defer emb.Close()
	emb.SetHook(func(*llmtest.Request) (llmtest.Fault, bool) { return llmtest.Fault{Vectors: llmtest.ZeroVector}, true })
	tei := llmtest.NewTEI()
	defer tei.Close()
	for i := 0; i < 3*2; i++ {
		tei.Enqueue(llmtest.TEIFault{Path: llmtest.TEIEmbedAllPath, Vectors: llmtest.ShortVector})
	}
	t.Setenv("SERVICE_API_KEY", "sk-service-test-key")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	if err := os.MkdirAll(exp, 0o755); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hostileServiceExperiment, "max_retries = 1\n  max_batch") && strings.Count(hostileServiceExperiment, "max_retries = 1") != 2 {
		t.Fatalf("the experiment did not get its retries:\n%s", hostileServiceExperiment)
	}
	if err := os.WriteFile(filepath.Join(exp, "exp.hcl"), []byte(fmt.Sprintf(hostileServiceExperiment, emb.URL, tei.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(exp, "items.jsonl"), []byte("{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(dir, "cache")
	sumPath := filepath.Join(dir, "summary.json")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if code != 1 {
		t.Fatalf("run on bad vectors: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"is all zeros, a vector with no direction", "has 7 dimensions, where the vectors before it have 8"} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("the run does not say %q:\n%s\n%s", want, stdout, stderr)
		}
	}
	if sum := readSummary(t, sumPath); sum.Nodes.Failed != 6 || sum.Nodes.Ran != 0 {
		t.Errorf("nodes %+v, want 6 failed", sum.Nodes)
	}
	// Two attempts a call: embeddings 3 x 2; TEI one tokenization and two embed_all a call.
	if emb.Count() != 6 || tei.Count(llmtest.TEITokenizePath) != 3 || tei.Count(llmtest.TEIEmbedAllPath) != 6 {
		t.Fatalf("requests: embeddings %d, tokenize %d, embed_all %d; want 6, 3, 6", emb.Count(), tei.Count(llmtest.TEITokenizePath), tei.Count(llmtest.TEIEmbedAllPath))
	}

	emb.SetHook(nil)
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("run once the servers answer well: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if sum := readSummary(t, sumPath); sum.Nodes.Ran != 6 || sum.ServiceCalls != 6 || emb.Count() != 9 || tei.Count(llmtest.TEIEmbedAllPath) != 9 {
		t.Errorf("second run: nodes %+v, %d service calls, embeddings %d, embed_all %d", sum.Nodes, sum.ServiceCalls, emb.Count(), tei.Count(llmtest.TEIEmbedAllPath))
	}
}
