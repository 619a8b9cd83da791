package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// renderPinned is the digest of what the shared rendering code renders for a
// fixed table, under renderVersion renderPinnedVersion. A memo vouches that a
// node would render the same request (memo.go), so when this code renders
// anything else, every memo must go stale: bump renderVersion, then pin the
// new digest here.
const (
	renderPinnedVersion = "1"
	renderPinned        = "919c5a0bb96c385e8e4a58bb"
)

func TestRenderVersionPinned(t *testing.T) {
	specs := []format.Spec{
		{Kind: format.Text}, {Kind: format.Ideas}, {Kind: format.Ideas, N: 1}, {Kind: format.Ideas, N: 5},
		{Kind: format.Ranking, Letters: "ABCD"}, {Kind: format.Fields, Fields: []string{"novelty", "feasibility"}, Min: 1, Max: 10},
		{Kind: format.Scores, Fields: []string{"novelty", "feasibility"}, Min: 1, Max: 5}, {Kind: format.Letter, Letters: "AB"},
		{Kind: format.Rating, Min: 1, Max: 10}, {Kind: format.Ideas, N: 3, Reask: "Please answer."},
	}
	h := sha256.New()
	for _, s := range specs {
		for _, m := range []string{
			stages.UserMessage("  Propose ideas about {{x}}.\n", s),
			format.RepairMessage(s, format.ErrRefusal),
			format.RepairMessage(s, errors.New("no ranking line")),
		} {
			h.Write([]byte(m))
			h.Write([]byte{0})
		}
	}
	out, err := stages.Render("pin", `{{numbered .L}}|{{join ", " .L}}|{{trim .S}}|{{upper .S}}|{{lower .S}}|{{inc 1}}`,
		map[string]any{"L": []string{"a", "b"}, "S": " Mixed Case "})
	if err != nil {
		t.Fatal(err)
	}
	h.Write([]byte(out))
	got := hex.EncodeToString(h.Sum(nil)[:12])
	if got != renderPinned || renderVersion != renderPinnedVersion {
		t.Fatalf("the shared rendering code renders %s under renderVersion %q; pinned %s under %q.\n"+
			"If it renders differently now, bump renderVersion (memo.go) so no memo vouches for the old requests, then pin renderPinned = %q and renderPinnedVersion = the new version.",
			got, renderVersion, renderPinned, renderPinnedVersion, got)
	}
}
