package batch

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestKillAndResume kills the first run at each step (kill -9: from that
// instant nothing more reaches the server or the journal), then starts a
// second run on the same journal, handed the items whose answers the
// first did not hand over, as the engine would hand them again. Every request is answered, none is submitted
// twice, and the counts of uploads, creations and downloads are exactly
// those the step implies.
func TestKillAndResume(t *testing.T) {
	tests := []struct {
		name string
		kill killSpec
		// what the server saw over both runs
		uploads, creates, downloads int
		handedTwice                 bool // the first run handed the answers over before it died
	}{
		{name: "no kill", uploads: 1, creates: 1, downloads: 1},
		{name: "during upload, before it reached the server", kill: killSpec{method: "POST", path: "/files"}, uploads: 1, creates: 1, downloads: 1},
		{name: "during upload, the file stored, its id lost", kill: killSpec{method: "POST", path: "/files", after: true}, uploads: 2, creates: 1, downloads: 1},
		{name: "torn intent write", kill: killSpec{tear: OpIntent}, uploads: 1, creates: 1, downloads: 1},
		{name: "torn uploaded write", kill: killSpec{tear: OpUploaded}, uploads: 2, creates: 1, downloads: 1},
		{name: "after upload, before create", kill: killSpec{method: "POST", path: "/batches"}, uploads: 1, creates: 1, downloads: 1},
		{name: "after create, before the journal heard", kill: killSpec{method: "POST", path: "/batches", after: true}, uploads: 1, creates: 1, downloads: 1},
		{name: "torn submitted write", kill: killSpec{tear: OpSubmitted}, uploads: 1, creates: 1, downloads: 1},
		{name: "while polling", kill: killSpec{method: "GET", path: "/batches/batch_000002", nth: 1, after: true}, uploads: 1, creates: 1, downloads: 1},
		{name: "during download", kill: killSpec{method: "GET", path: "/content", after: true}, uploads: 1, creates: 1, downloads: 2},
		{name: "after hand-over, before done", kill: killSpec{tear: OpDone}, uploads: 1, creates: 1, downloads: 2, handedTwice: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			its := items("m", 5, "a")
			col := newCollector()

			k := &killer{killSpec: tt.kill}
			c1, end1 := f.process(k)
			_, err := c1.Submit(bg, its)
			if err == nil {
				err = c1.Wait(bg, col.sink)
			}
			end1()
			killed := k.method != "" || k.tear != ""
			if killed != (err != nil) || (err != nil && !errors.Is(err, errKilled)) {
				t.Fatalf("first run: %v (killed %v, dead %v)", err, killed, k.dead.Load())
			}

			// The engine hands again what the cache lacks.
			var again []Item
			for _, it := range its {
				if _, ok := col.got[it.Key]; !ok {
					again = append(again, it)
				}
			}
			c2, end2 := f.process(nil)
			defer end2()
			if _, err := c2.Submit(bg, again); err != nil {
				t.Fatal(err)
			}
			if err := c2.Wait(bg, col.sink); err != nil {
				t.Fatal(err)
			}
			if len(c2.Open()) != 0 {
				t.Fatalf("open after resume: %+v", c2.Open())
			}
			for _, it := range its {
				r, ok := col.got[it.Key]
				if !ok || r.Failure != nil || r.Response == nil {
					t.Fatalf("%s: %+v", it.Key, r)
				}
				want := 1
				if tt.handedTwice {
					want = 2
				}
				if col.times[it.Key] != want {
					t.Fatalf("%s handed over %d times, want %d", it.Key, col.times[it.Key], want)
				}
			}
			sub, ran := f.srv.Submitted(), f.srv.Executed()
			if len(sub) != len(its) {
				t.Fatalf("submitted %v", sub)
			}
			for key, n := range sub {
				if n != 1 || ran[key] != 1 {
					t.Fatalf("%s submitted %d times, run %d times", key, n, ran[key])
				}
			}
			got := f.srv.Counts()
			if got.Uploads != tt.uploads || got.Creates != tt.creates || got.Downloads != tt.downloads {
				t.Fatalf("counts %+v, want %d uploads, %d creates, %d downloads", got, tt.uploads, tt.creates, tt.downloads)
			}
			// A third run finds nothing to do and asks the server nothing.
			end2()
			before := f.srv.Counts()
			c3, end3 := f.process(nil)
			defer end3()
			if err := c3.Wait(bg, col.sink); err != nil || len(c3.Open()) != 0 || f.srv.Counts() != before {
				t.Fatalf("third run: %v, open %v, counts %+v -> %+v", err, c3.Open(), before, f.srv.Counts())
			}
		})
	}
}

// TestResumeFindsOlderBatches: the batch a lost creation made is found
// however many newer batches other work created since (the listing is
// paged, newest first).
func TestResumeFindsOlderBatches(t *testing.T) {
	f := newFixture(t)
	k := &killer{killSpec: killSpec{method: "POST", path: "/batches", after: true}}
	c1, end1 := f.process(k)
	if _, err := c1.Submit(bg, items("m", 2, "a")); !errors.Is(err, errKilled) {
		t.Fatalf("first run: %v", err)
	}
	end1()
	other, endOther := f.process(nil) // someone else's journal would do; this one is free now
	other.recovered = true            // play a client that does not resume: it only adds newer batches
	for i := 0; i < 130; i++ {
		if _, err := other.Submit(bg, items("m", 1, "z"+strings.Repeat("z", i))); err != nil {
			t.Fatal(err)
		}
	}
	endOther()
	// Forget the newer batches' journal entries, keeping the lost one's.
	c2, end2 := f.process(nil)
	defer end2()
	found := false
	for _, s := range c2.Open() {
		if s.Keys[0] == "a00" {
			found = true
		}
	}
	if !found {
		t.Fatal("lost submission not open")
	}
	if err := c2.recover(bg); err != nil {
		t.Fatal(err)
	}
	if got := f.srv.Counts(); got.Creates != 131 || got.Lists < 2 {
		t.Fatalf("counts %+v: want the lost batch found over >1 page, not created again", got)
	}
	for key, n := range f.srv.Submitted() {
		if n != 1 {
			t.Fatalf("%s submitted %d times", key, n)
		}
	}
}

// TestJournalTornAndDamaged: a torn last line (a crash mid-write) is cut
// and later writes follow the good prefix; a damaged line with entries
// after it fails the open with a fix; a second open while the first
// holds the journal fails.
func TestJournalTornAndDamaged(t *testing.T) {
	path := t.TempDir() + "/j"
	j, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Entry{{Op: OpIntent, Submission: "s1", Keys: []string{"a"}}, {Op: OpUploaded, Submission: "s1", FileID: "f"}} {
		if err := j.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := OpenFile(path); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: %v", err)
	}
	j.Close()
	line, _ := encodeLine(Entry{Op: OpSubmitted, Submission: "s1", BatchID: "b"})
	appendRaw(path, line[:len(line)-5])
	j, err = OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	es, _ := j.Entries()
	if len(es) != 2 {
		t.Fatalf("entries after torn write: %+v", es)
	}
	if err := j.Record(Entry{Op: OpSubmitted, Submission: "s1", BatchID: "b2"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j, err = OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	es, _ = j.Entries()
	if len(es) != 3 || es[2].BatchID != "b2" {
		t.Fatalf("entries %+v", es)
	}
	j.Close()

	// Flip one byte of the first entry: damage with entries after it.
	b, _ := os.ReadFile(path)
	b[20] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(path); err == nil || !strings.Contains(err.Error(), "line 1 is damaged") || !strings.Contains(err.Error(), "ideaflow batches") {
		t.Fatalf("damaged journal: %v", err)
	}
}

// TestJournalReplayRefusesForeign: entries without an intent before them
// are not this client's journal.
func TestJournalReplayRefusesForeign(t *testing.T) {
	f := newFixture(t)
	j, err := OpenFile(f.journal)
	if err != nil {
		t.Fatal(err)
	}
	_ = j.Record(Entry{Op: OpSubmitted, Submission: "x", BatchID: "b"})
	defer j.Close()
	if _, err := New(f.llmClient(nil), j, f.opts); err == nil || !strings.Contains(err.Error(), "no intent") {
		t.Fatalf("err %v", err)
	}
}

// TestDetachAndResume: a run that submits and exits (run --detach) leaves
// its batches open in the journal; a later run lists them and collects
// their answers without submitting anything.
func TestDetachAndResume(t *testing.T) {
	f := newFixture(t, llmtest.WithBatchPlan(func(int, []string) llmtest.BatchPlan { return llmtest.BatchPlan{Hold: 3} }))
	c1, end1 := f.process(nil)
	if _, err := c1.Submit(bg, append(items("m", 3, "a"), items("n", 2, "b")...)); err != nil {
		t.Fatal(err)
	}
	end1()
	c2, end2 := f.process(nil)
	defer end2()
	open := c2.Open()
	if len(open) != 2 || open[0].State != OpSubmitted || open[0].Model != "m" || len(open[1].Keys) != 2 || open[1].BatchID == "" {
		t.Fatalf("open %+v", open)
	}
	col := newCollector()
	if err := c2.Wait(bg, col.sink); err != nil {
		t.Fatal(err)
	}
	if len(col.got) != 5 || f.srv.Counts().Creates != 2 || f.srv.Counts().Uploads != 2 {
		t.Fatalf("results %d, counts %+v", len(col.got), f.srv.Counts())
	}
}
