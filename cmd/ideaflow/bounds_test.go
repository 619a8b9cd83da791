package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// boundsBase is a small mock experiment over a keyword list; each case of
// TestInputBounds adds to it or replaces part of it.
const boundsBase = `provider "mock" {
  kind = "mock"
}

model "m" {
  provider = provider.mock
  name     = "m"
}

dataset "d" {
  format = "keywords"
  path   = "kw.txt"
}

stage "generate_from_keyword" "g" {
  keywords = dataset.d
  model    = model.m
}
`

// TestInputBounds gives validate, through the CLI, one value past each
// declared bound, a non-regular file where a file is read, and oversized
// or malformed data: each is exit 2 with one located error that names the
// limit, before any model is called.
func TestInputBounds(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 17<<20); err != nil { // sparse: 17 MiB read as zeros
		t.Fatal(err)
	}
	openai := func(setting string) string {
		return boundsBase + fmt.Sprintf("\nprovider \"gw\" {\n  kind     = \"openai\"\n  base_url = \"http://localhost:1/v1\"\n  api_key_env = \"GW_KEY\"\n  %s\n}\n", setting)
	}
	local := func(expr string) string { return boundsBase + "\nlocals {\n  x = " + expr + "\n}\n" }
	dataset := func(block string) string {
		return strings.Replace(boundsBase, "dataset \"d\" {\n  format = \"keywords\"\n  path   = \"kw.txt\"\n}", block, 1)
	}
	cases := []struct {
		name  string
		hcl   string
		files map[string]string // more files in the experiment folder
		at    string            // "main.hcl:LINE:" of the one error
		want  []string
	}{
		{"requests_per_minute", openai("requests_per_minute = 0.0001"), nil, "main.hcl:24:", []string{"requests_per_minute must be 0 (unlimited) or 1 to 1000000000, got 0.0001"}},
		{"tokens_per_minute", openai("tokens_per_minute = 10"), nil, "main.hcl:24:", []string{"tokens_per_minute must be 0 (unlimited) or 1000 to 1000000000000, got 10"}},
		{"max_concurrency", openai("max_concurrency = 1e7"), nil, "main.hcl:24:", []string{"max_concurrency must be 0 (the default, 32) or 1 to 1024, got 10000000"}},
		{"max_concurrency mock", strings.Replace(boundsBase, `kind = "mock"`, "kind = \"mock\"\n  max_concurrency = 1e9", 1), nil, "main.hcl:3:", []string{"max_concurrency must be 0 (the default, 64) or 1 to 1024, got 1000000000"}},
		{"max_retries", openai("max_retries = 1000"), nil, "main.hcl:24:", []string{"max_retries must be -1 to 100, got 1000"}},
		{"timeout_seconds", openai("timeout_seconds = 1e6"), nil, "main.hcl:24:", []string{"timeout_seconds must be 0 (the default, 120) or 0.01 to 3600, got 1e+06"}},
		{"max_reply_bytes", openai("max_reply_bytes = 1e12"), nil, "main.hcl:24:", []string{"max_reply_bytes must be 0 (the default, 4194304) or 1 to 1073741824"}},
		{"breaker_seconds", openai("breaker_seconds = 1e9"), nil, "main.hcl:24:", []string{"breaker_seconds must be 0 (the default, 120) or 1 to 86400"}},
		{"max_tokens", strings.Replace(boundsBase, `name     = "m"`, "name     = \"m\"\n  max_tokens = 1e12", 1), nil, "main.hcl:8:", []string{"max_tokens must be between 0 and 1000000, got 1e+12"}},
		{"price", strings.Replace(boundsBase, `name     = "m"`, "name     = \"m\"\n  price {\n    input_per_mtok  = -1\n    output_per_mtok = 1\n  }", 1), nil, "main.hcl:9:", []string{"input_per_mtok must be between 0 and 10000, got -1"}},
		{"file of /dev/zero", local(`file("/dev/zero")`), nil, "main.hcl:21:", []string{`Call to function "file" failed`, "/dev/zero is a device, not a regular file"}},
		{"file of a FIFO", local(fmt.Sprintf("file(%q)", fifo)), nil, "main.hcl:21:", []string{"is a named pipe, not a regular file"}},
		{"file over 16 MiB", local(fmt.Sprintf("file(%q)", big)), nil, "main.hcl:21:", []string{"is 17 MiB, over the 16 MiB limit"}},
		{"nested replace", boundsBase + "\nlocals {\n  a = join(\"\", [for i in range(1000) : \"x\"])\n  x = replace(replace(local.a, \"\", local.a), \"\", local.a)\n}\n", nil, "main.hcl:22:",
			[]string{`Call to function "replace" failed`, "would build a string of 956.5 MiB, over the 16 MiB limit of one string"}},
		{"nested replace of file()", boundsBase + "\nlocals {\n  x = replace(replace(file(\"big.txt\"), \"\", \"ab\"), \"\", file(\"big.txt\"))\n}\n",
			map[string]string{"big.txt": strings.Repeat("x", 1<<20)}, "main.hcl:21:",
			[]string{`Call to function "replace" failed`, "over the 16 MiB limit of one string"}},
		{"format width", local(`format("%999999999s", "a")`), nil, "main.hcl:21:", []string{"width or precision 999999999 in the format is over the 100000 limit"}},
		{"setproduct", local(`setproduct(range(1000), range(1000), range(10))`), nil, "main.hcl:21:", []string{"would build 10000000 combinations, over the 1000000 limit"}},
		{"join", boundsBase + "\nlocals {\n  a = join(\"\", [for i in range(1000) : \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"])\n  x = join(\"\", [for i in range(1000) : local.a])\n}\n", nil, "main.hcl:22:",
			[]string{`Call to function "join" failed`, "its arguments hold more than 64 MiB of text"}},
		{"nested parentheses", local(strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000)), nil, "main.hcl:21:", []string{"Expression nested too deeply", "more than 256 levels"}},
		{"dataset FIFO", dataset(fmt.Sprintf("dataset \"d\" {\n  format = \"keywords\"\n  path   = %q\n}", fifo)), nil, "main.hcl:12:", []string{"Dataset file cannot be read", "is a named pipe, not a regular file"}},
		{"dataset folder", dataset("dataset \"d\" {\n  format = \"keywords\"\n  path   = \"sub\"\n}"), map[string]string{"sub/x": "a"}, "main.hcl:12:", []string{"sub is a folder, not a file"}},
		{"keyword over 4 KiB", boundsBase, map[string]string{"kw.txt": "alpha\n" + strings.Repeat("k", 5000) + "\n"}, "main.hcl:10:",
			[]string{"kw.txt:2: id of 5000 bytes", "longer than 1024 bytes, the limit for an item id"}},
		{"NUL in a keyword", boundsBase, map[string]string{"kw.txt": "alpha\nbe\x00ta\n"}, "main.hcl:10:", []string{"kw.txt:2: id \"be\\x00ta\" holds the control character U+0000"}},
		{"negative citations", dataset("dataset \"d\" {\n  format = \"ideabench\"\n  path   = \"t.jsonl\"\n}") + "\nstage \"filter_references\" \"f\" {\n  dataset = dataset.d\n}\n",
			map[string]string{"t.jsonl": `{"id": "p1", "title": "T", "abstract": "A", "references": [{"id": "r1", "title": "R", "abstract": "B", "citations": -3}]}` + "\n"},
			"main.hcl:10:", []string{"t.jsonl:1: references[0] (\"r1\"): citations -3 is negative"}},
		{"idea file over 4 MiB", dataset("dataset \"d\" {\n  format = \"scholarideas\"\n  path   = \"ideas\"\n}"),
			map[string]string{"ideas/ai_1/ai_1.txt": strings.Repeat("plan ", 1<<20), "ideas/ai_1/cutoff.txt": "2024-01-01\n",
				"ideas/ai_1/ai_1.jsonl": `{"statement": "s", "type": "strength", "axis": "soundness", "severity": "major"}` + "\n"},
			"main.hcl:10:", []string{"ai_1.txt is 5 MiB, over the 4 MiB limit"}},
		{"for_each key over 1 KiB", boundsBase + "\nstage \"generate_from_keyword\" \"h\" {\n  for_each = { (join(\"\", [for i in range(1000) : \"ab\"])) = 1 }\n  keywords = dataset.d\n  model    = model.m\n}\n", nil,
			"main.hcl:21:", []string{"for_each key: id of 2000 bytes", "longer than 1024 bytes, the limit for an instance key"}},
		{"corpus missing", boundsBase + "\nprovider \"papers\" {\n  kind = \"corpus\"\n  path = \"corpus.jsonl\"\n}\n", nil, "main.hcl:22:", []string{`no file exists at "corpus.jsonl"`}},
		{"corpus bad line", boundsBase + "\nprovider \"papers\" {\n  kind = \"corpus\"\n  path = \"corpus.jsonl\"\n}\n",
			map[string]string{"corpus.jsonl": `{"paperId": "a", "title": "A"}` + "\n" + `{"paperId": "b", "titel": "B"}` + "\n"}, "main.hcl:22:", []string{"corpus.jsonl:2: unknown member titel"}},
		{"corpus FIFO", boundsBase + fmt.Sprintf("\nprovider \"papers\" {\n  kind = \"corpus\"\n  path = %q\n}\n", fifo), nil, "main.hcl:22:", []string{"is a named pipe, not a regular file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"kw.txt": "alpha\nbeta\n", "main.hcl": c.hcl}
			for n, s := range c.files {
				files[n] = s
			}
			for n, s := range files {
				writeFile(t, filepath.Join(dir, n), s)
			}
			code, stdout, stderr := cli(t, "validate", dir)
			if code != exitBadInput {
				t.Fatalf("exit %d, want 2\n%s\n%s", code, stdout, stderr)
			}
			if got := strings.Count(stderr, ": error: "); got != 1 || !strings.Contains(stderr, filepath.Join(dir, c.at)) {
				t.Errorf("want one error at %s, got %d:\n%s", c.at, got, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestEveryNumberSettingIsBounded: every int or number setting of every
// registered provider kind declares its range (a seed excepted), so the
// reference prints it and validate checks it at the attribute.
func TestEveryNumberSettingIsBounded(t *testing.T) {
	for _, k := range llm.Kinds() {
		for _, s := range k.Settings {
			if (s.Type == llm.TypeInt || s.Type == llm.TypeNumber) && s.Range == nil && s.Name != "seed" {
				t.Errorf("kind %s: setting %s has no Range", k.Name, s.Name)
			}
			if s.Range != nil && s.Default != nil {
				if err := s.Range.Check(s.Default); err != nil {
					t.Errorf("kind %s: %s's default %v is outside its range: %v", k.Name, s.Name, s.Default, err)
				}
			}
		}
	}
}

// TestBinaryExperimentFile gives validate 100 kB of random bytes as a .hcl
// file, and then 100 kB of text that is no HCL: the first is one error
// ("Not a text file"), the second at most MaxPrinted errors and a count of
// the rest, a few kilobytes where it was 2 MB.
func TestBinaryExperimentFile(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	bin := make([]byte, 100_000)
	rng.Read(bin)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.hcl"), string(bin))
	code, _, stderr := cli(t, "validate", dir)
	if code != exitBadInput || strings.Count(stderr, ": error: ") != 1 || !strings.Contains(stderr, "Not a text file") || len(stderr) > 2000 {
		t.Errorf("binary file: exit %d, %d bytes of stderr:\n%.2000s", code, len(stderr), stderr)
	}
	const chars = "{}[]()=\"$%!#&*+,;<>?@^`|~ \n"
	text := make([]byte, 100_000)
	for i := range text {
		text[i] = chars[rng.Intn(len(chars))]
	}
	writeFile(t, filepath.Join(dir, "main.hcl"), string(text))
	code, _, stderr = cli(t, "validate", dir)
	if code != exitBadInput || strings.Count(stderr, ": error: ") > 20 || !strings.Contains(stderr, "more error(s)") || len(stderr) > 20_000 {
		t.Errorf("garbled file: exit %d, %d errors, %d bytes of stderr:\n%.3000s", code, strings.Count(stderr, ": error: "), len(stderr), stderr)
	}
}
