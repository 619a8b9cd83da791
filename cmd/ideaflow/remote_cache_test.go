package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/ideaflow/ideaflow/cache/remote"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// fakeS3 is an in-process S3 (gofakes3: it honours If-None-Match) with one
// bucket, and the environment the AWS chain reads dummy credentials from.
func fakeS3(t testing.TB) (*s3mem.Backend, string) {
	t.Helper()
	b := s3mem.New()
	if err := b.CreateBucket("lab"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(b).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTESTTESTTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret-never-printed")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("IDEAFLOW_CACHE_REMOTE_ENDPOINT", srv.URL)
	return b, "s3://lab/team"
}

// remoteRun runs an experiment of generators gens against srv with its own
// local cache and the shared remote, and returns stdout and the requests
// it made. remoteURL "": no remote.
func remoteRun(t *testing.T, srv *llmtest.Server, remoteURL string, gens ...string) (string, int, string) {
	t.Helper()
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "CLI_TEST_KEY", Generators: gens, N: 3, Limit: 5})
	sumPath := filepath.Join(dir, "s.json")
	before := srv.Count()
	args := []string{"run", exp, "--cache-dir", filepath.Join(dir, "cache"), "--summary-json", sumPath}
	if remoteURL != "" {
		args = append(args, "--cache-remote", remoteURL)
	}
	code, stdout, stderr := cli(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "test-secret-never-printed") {
		t.Fatal("the AWS secret was printed")
	}
	t.Log(stderr)
	return stdout, srv.Count() - before, readSummary(t, sumPath).ResultsDigest
}

// Two users with overlapping experiments (generators a, b and b, c), each
// with a local cache of their own and one remote: the endpoint answers each
// distinct request once. A third user on a fresh local cache then runs the
// first experiment warm from the remote: no request, the same results.
func TestRemoteCacheSharedByTwoUsers(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("CLI_TEST_KEY", "sk-cli-test")
	_, remoteURL := fakeS3(t)

	outA, callsA, digestA := remoteRun(t, srv, remoteURL, "gen-a", "gen-b")
	_, callsB, _ := remoteRun(t, srv, remoteURL, "gen-b", "gen-c")
	// Alone (no remote), B's experiment makes 32 calls; 16 of them
	// (gen-b's 12 samples and 4 rankings) A made already.
	_, callsBAlone, _ := remoteRun(t, srv, "", "gen-b", "gen-c")
	if callsA != 32 || callsBAlone != 32 || callsB != callsBAlone-16 {
		t.Fatalf("user A made %d requests, user B %d (%d alone): want 32 and 32-16 (gen-b's calls came from the remote)", callsA, callsB, callsBAlone)
	}
	if !strings.Contains(outA, "Remote cache s3://lab/team/: 0 record(s) read, ") {
		t.Errorf("user A's report:\n%s", outA)
	}
	outC, callsC, digestC := remoteRun(t, srv, remoteURL, "gen-a", "gen-b")
	if callsC != 0 || digestC != digestA {
		t.Fatalf("warm on a fresh local cache: %d requests, digest %s, want 0 and %s", callsC, digestC, digestA)
	}
	if !strings.Contains(outC, " 0 written") {
		t.Errorf("warm run's report:\n%s", outC)
	}
}

// A remote object that fails its checks is a miss: its node is computed
// again (its one call made again), the run's results are unchanged, and
// the run says one corrupt object was ignored.
func TestCorruptRemoteObjectIsAMiss(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("CLI_TEST_KEY", "sk-cli-test")
	b, remoteURL := fakeS3(t)
	_, _, digest := remoteRun(t, srv, remoteURL, "gen-a", "gen-b")

	// Damage the record of one generation call: a flipped byte in its answer.
	list, err := b.ListBucket("lab", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	damaged := ""
	for _, c := range list.Contents {
		obj, err := b.GetObject("lab", c.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		key := c.Key[strings.LastIndex(c.Key, "/")+1:]
		rec, err := remote.Decode(key, body)
		if err != nil {
			t.Fatalf("%s: %v", c.Key, err)
		}
		if rec.Raw == "" || !strings.HasPrefix(rec.Address, "stage.generate_ideas") || rec.AnswerKey != "" {
			continue
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(body, &o); err != nil {
			t.Fatal(err)
		}
		bad := bytes.Replace(body, []byte("Combine"), []byte("Combime"), 1)
		if bytes.Equal(bad, body) {
			continue
		}
		if _, err := b.PutObject("lab", c.Key, map[string]string{}, bytes.NewReader(bad), int64(len(bad)), nil); err != nil {
			t.Fatal(err)
		}
		damaged = c.Key
		break
	}
	if damaged == "" {
		t.Fatal("no generation record found in the remote")
	}
	out, calls, digest2 := remoteRun(t, srv, remoteURL, "gen-a", "gen-b")
	if calls != 1 || digest2 != digest || !strings.Contains(out, "1 corrupt object(s) ignored (recomputed)") {
		t.Fatalf("after damaging %s: %d requests, digest %s (want 1 and %s)\n%s", damaged, calls, digest2, digest, out)
	}
}
