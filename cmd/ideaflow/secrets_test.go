package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestAPIKeyNeverPersisted runs with a recognisable key through success,
// retried 5xx/429 and failing 401 paths at debug log level, then searches
// every byte ideaflow wrote for it.
func TestAPIKeyNeverPersisted(t *testing.T) {
	const key = "sk-ideaflow-CANARY-5f1e9b7c"
	srv := llmtest.New(llmtest.WithResponder(responder), llmtest.WithAPIKey(key))
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Status: 500}, llmtest.Fault{Status: 429, RetryAfter: "0"}, llmtest.Fault{Status: 503})
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	cacheDir := filepath.Join(dir, "cache")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "CANARY_API_KEY", Generators: []string{"gen-a"}, N: 2, Limit: 5})

	var logs bytes.Buffer
	t.Setenv("CANARY_API_KEY", key)
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--log-level", "debug", "--log-format", "json",
		"--summary-json", filepath.Join(dir, "summary.json"), "--out", filepath.Join(dir, "results"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	logs.WriteString(stdout + stderr)

	// A wrong key: the server answers 401 and the message must not echo the key either.
	t.Setenv("CANARY_API_KEY", key+"-wrong")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "CANARY_API_KEY", Generators: []string{"gen-z"}, N: 1, Limit: 5})
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--log-level", "debug", "--log-format", "json",
		"--summary-json", filepath.Join(dir, "summary-401.json"))
	if code != 1 {
		t.Fatalf("401 run: exit %d, want 1 (failed nodes)\n%s\n%s", code, stdout, stderr)
	}
	logs.WriteString(stdout + stderr)
	if !bytes.Contains(logs.Bytes(), []byte("CANARY_API_KEY")) {
		t.Errorf("the 401 failure should name the env var holding the key; output:\n%s", stderr)
	}

	if bytes.Contains(logs.Bytes(), []byte(key)) {
		t.Errorf("API key found in CLI output or logs")
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(key)) && filepath.Base(p) != "main.hcl" {
			t.Errorf("API key found in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Badger may compress values on disk; read every record and failure back too.
	store, err := cache.Open(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var bundle bytes.Buffer
	if _, err := store.Export(&bundle, nil); err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = store.List(func(e cache.Entry) error {
		n++
		rec, err := store.Get(e.Key)
		if err != nil {
			return err
		}
		parts, _ := store.Parts(e.Key)
		f, _ := store.Failure(e.Key)
		for _, s := range []any{rec, parts, f} {
			if bytes.Contains([]byte(jsonString(s)), []byte(key)) {
				t.Errorf("API key found in cache record %s", e.Key)
			}
		}
		return nil
	})
	if n == 0 {
		t.Fatal("cache is empty: the test searched nothing")
	}
	runs, _ := store.Runs()
	for _, r := range runs {
		if bytes.Contains([]byte(jsonString(r)), []byte(key)) {
			t.Errorf("API key found in run record %s", r.ID)
		}
	}
}
