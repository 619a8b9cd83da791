package cache

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// A bundle carries the run records (and so the variable values each run
// used) when it is the whole cache, or the runs ExportRuns names; the
// importer keeps its own copy of a run it already has.
func TestBundleCarriesRuns(t *testing.T) {
	src := openTemp(t)
	defer src.Close()
	mustPut(t, src, sampleRecord(0), sampleRecord(1))
	runs := []*RunRecord{
		{ID: "exp-1", Experiment: "exp", Started: time.Unix(1, 0).UTC(), Variables: map[string]string{"n": "3"}, VarValues: map[string]string{"n": "3"}},
		{ID: "exp-2", Experiment: "exp", Started: time.Unix(2, 0).UTC(), Variables: map[string]string{"n": "5", "tag": "x"},
			VarValues: map[string]string{"n": "5", "tag": `"x"`}, VarFiles: []VarFile{{Path: "/e/five.tfvars", SHA256: "ab"}}},
	}
	for _, r := range runs {
		if err := src.PutRun(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		export func(*bytes.Buffer) (ExportResult, error)
		want   []*RunRecord
	}{
		{"whole cache", func(b *bytes.Buffer) (ExportResult, error) { return src.Export(b, nil) }, runs},
		{"named runs", func(b *bytes.Buffer) (ExportResult, error) {
			return src.ExportRuns(b, map[string]bool{sampleRecord(1).Key: true}, runs[1:])
		}, runs[1:]},
		{"subset without runs", func(b *bytes.Buffer) (ExportResult, error) {
			return src.Export(b, map[string]bool{sampleRecord(1).Key: true})
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := tc.export(&buf); err != nil {
				t.Fatal(err)
			}
			if v := buf.Bytes(); len(tc.want) == 0 {
				if _, n, err := BundleDigest(bytes.NewReader(v)); err != nil || n != 1 {
					t.Fatalf("BundleDigest = %d, %v", n, err)
				}
			}
			dst := openTemp(t)
			defer dst.Close()
			if n, err := dst.Import(bytes.NewReader(buf.Bytes())); err != nil || n == 0 {
				t.Fatalf("Import = %d, %v", n, err)
			}
			got, err := dst.Runs()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) || len(got) > 0 && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("imported runs:\n got %+v\nwant %+v", got, tc.want)
			}
			// Importing again changes nothing.
			if _, err := dst.Import(bytes.NewReader(buf.Bytes())); err != nil {
				t.Fatal(err)
			}
			if again, _ := dst.Runs(); len(again) != len(tc.want) {
				t.Fatalf("a second import left %d runs, want %d", len(again), len(tc.want))
			}
		})
	}
}

// A bundle without runs is version 1, as before runs were added: an older
// ideaflow reads it.
func TestBundleWithoutRunsIsVersion1(t *testing.T) {
	src := NewMemory()
	mustPut(t, src, sampleRecord(0))
	var buf bytes.Buffer
	if _, err := src.Export(&buf, nil); err != nil {
		t.Fatal(err)
	}
	header := gunzip(t, buf.Bytes())[:len(bundleMagic)+1]
	if v := header[len(bundleMagic)]; v != bundleVersion {
		t.Fatalf("version %d, want %d", v, bundleVersion)
	}
}
