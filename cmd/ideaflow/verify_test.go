package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// TestVerifySampleCountsMovedAnswers runs the scenario, then makes the
// server rank differently (the generation answers stay), and asks every
// cached call again: each generation call gives its cached answer back,
// each ranking call does not, and the parsed ranks moved. A 25% sample asks
// exactly ceil(0.25 * calls) of them. The cache is never changed: its bundle
// digest is the same before and after.
func TestVerifySampleCountsMovedAnswers(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	gen, rank := 0, 0
	for _, r := range srv.Requests() {
		if r.Chat.Model == "judge-model" {
			rank++
		} else {
			gen++
		}
	}
	if gen == 0 || rank == 0 {
		t.Fatalf("the run sent %d generation and %d ranking requests: want both", gen, rank)
	}
	digest := func() string {
		_, out, stderr := cli(t, "cache", "export", filepath.Join(t.TempDir(), "b"), "--cache-dir", cacheDir)
		m := regexp.MustCompile(`digest: (sha256:[0-9a-f]+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("export: %s %s", out, stderr)
		}
		return m[1]
	}
	before := digest()
	srv.SetResponder(func(req *openai.ChatCompletionRequest) string {
		out := responder(req)
		if i := strings.Index(out, "Ranking: "); i >= 0 {
			letters := strings.Split(out[i+len("Ranking: "):], " > ")
			for l, r := 0, len(letters)-1; l < r; l, r = l+1, r-1 {
				letters[l], letters[r] = letters[r], letters[l]
			}
			return out[:i] + "Ranking: " + strings.Join(letters, " > ")
		}
		return out
	})
	sent := srv.Count()
	code, out, stderr := cli(t, "verify", exp, "--cache-dir", cacheDir, "--sample", "100%")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, stderr)
	}
	if n := srv.Count() - sent; n != gen+rank {
		t.Errorf("verify --sample 100%% sent %d requests, want %d", n, gen+rank)
	}
	want := regexp.MustCompile(`provider fake: (\d+) asked, (\d+) same answer \(.*\), (\d+) same parsed output \(.*\), (\d+) failed; scores: (\d+) compared, (\d+) moved`).FindStringSubmatch(out)
	if want == nil {
		t.Fatalf("no provider line:\n%s", out)
	}
	if want[1] != itoa(gen+rank) || want[2] != itoa(gen) || want[3] != itoa(gen) || want[4] != "0" || want[6] == "0" {
		t.Errorf("asked/same answer/same output/failed/moved = %s/%s/%s/%s/%s, want %d/%d/%d/0/>0\n%s", want[1], want[2], want[3], want[4], want[6], gen+rank, gen, gen, out)
	}
	t.Logf("%d generation, %d ranking calls:\n%s", gen, rank, out)
	sent = srv.Count()
	code, out, _ = cli(t, "verify", exp, "--cache-dir", cacheDir, "--sample", "25%")
	wantN := (gen + rank + 3) / 4
	if code != 0 || srv.Count()-sent != wantN || !strings.Contains(out, "asked again "+itoa(wantN)+" of "+itoa(gen+rank)+" cached model call(s)") {
		t.Errorf("25%%: exit %d, %d requests, want %d\n%s", code, srv.Count()-sent, wantN, out)
	}
	if after := digest(); after != before {
		t.Errorf("verify changed the cache: bundle digest %s -> %s", before, after)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
