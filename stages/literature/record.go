package literature

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// Recorded evidence: the literature replies of a run, written as lines of
// a corpus file, so that others can run the same experiment offline on the
// same evidence. `ideaflow evidence` writes them from the cached replies of
// an experiment; the corpus kind replays them (Corpus.Serve answers a
// recorded request with its recorded reply, verbatim, before anything
// else). A corpus file may hold papers, exchanges or both:
//
//   - a paper line is a Semantic Scholar paper object (see LoadCorpus);
//   - an exchange line is {"op": ..., "request": {...}, "reply": {...}}:
//     one literature request (the operation and its JSON body) and the
//     reply it got, in the reply shape of ops.go.
//
// A request is matched on its operation and its body as canonical JSON
// (members sorted, numbers as written), so the key order a client happens
// to write does not matter, while any changed field (a query, a limit, an
// as_of, a cutoff) does. A file of exchanges alone answers only what was
// recorded: any other request is an error that says so, rather than an
// empty result that would silently change the evidence. A file with papers
// too answers the other requests from its papers, as a corpus does.

// Exchange is one recorded literature request and its reply.
type Exchange struct {
	Op      string          `json:"op"`
	Request json.RawMessage `json:"request"`
	Reply   json.RawMessage `json:"reply"`
}

// exchangeMembers are the members of an exchange line; a corpus line with
// "op" is read as one, and any other member is an error.
var exchangeMembers = map[string]bool{"op": true, "request": true, "reply": true}

// recordedKey is what a request is matched by: its operation and its body
// as canonical JSON.
func recordedKey(op string, body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%s request body is not JSON: %v", op, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return "", fmt.Errorf("%s request body is not a JSON object", op)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return op + "\x00" + string(canon), nil
}

// recorded is a corpus's exchanges: replies by request, and the line each
// came from.
type recorded struct {
	replies map[string]json.RawMessage
	lines   map[string]int
}

// addExchange reads one exchange line (its members already split).
func (c *Corpus) addExchange(line int, members map[string]json.RawMessage) error {
	var unknown []string
	for m := range members {
		if !exchangeMembers[m] {
			unknown = append(unknown, m)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown member %s (an exchange line has op, request and reply)", strings.Join(unknown, ", "))
	}
	var x Exchange
	if err := json.Unmarshal(members["op"], &x.Op); err != nil {
		return fmt.Errorf("op is not a string: %v", err)
	}
	if !slices.Contains(Ops, x.Op) {
		return fmt.Errorf("op %q is not a literature operation (one of %s)", x.Op, strings.Join(Ops, ", "))
	}
	x.Request, x.Reply = members["request"], members["reply"]
	if len(x.Reply) == 0 || x.Reply[0] != '{' {
		return fmt.Errorf("%s exchange has no reply object", x.Op)
	}
	key, err := recordedKey(x.Op, x.Request)
	if err != nil {
		return err
	}
	if c.recorded.replies == nil {
		c.recorded = recorded{replies: map[string]json.RawMessage{}, lines: map[string]int{}}
	}
	if prev, ok := c.recorded.replies[key]; ok {
		if !bytes.Equal(prev, x.Reply) {
			return fmt.Errorf("the %s request of line %d is recorded again with another reply; keep one", x.Op, c.recorded.lines[key])
		}
		return nil
	}
	c.recorded.replies[key] = x.Reply
	c.recorded.lines[key] = line
	return nil
}

// Recorded is the number of recorded exchanges the corpus holds.
func (c *Corpus) Recorded() int { return len(c.recorded.replies) }

// replay answers req from the recorded exchanges: ok reports whether it
// was recorded. Without papers to fall back on, a request that was not
// recorded is an error.
func (c *Corpus) replay(req llm.ServiceRequest) (json.RawMessage, bool, error) {
	if len(c.recorded.replies) == 0 {
		return nil, false, nil
	}
	key, err := recordedKey(req.Op, req.Body)
	if err != nil {
		return nil, false, err
	}
	if reply, ok := c.recorded.replies[key]; ok {
		return reply, true, nil
	}
	if len(c.papers) == 0 {
		return nil, false, fmt.Errorf("this %s request is not in the recording %s (%d exchanges; a changed query, limit, as_of or cutoff is another request): record the evidence again with `ideaflow evidence`, or add paper lines to answer it from: %s",
			req.Op, c.Path, len(c.recorded.replies), req.Body)
	}
	return nil, false, nil
}

// WriteEvidence writes exchanges as corpus lines, one JSON object a line,
// sorted by operation and request so that a recording of the same replies
// is the same file, each distinct request once (a request recorded twice
// with two replies is an error: the evidence would be ambiguous). It
// returns how many lines it wrote.
func WriteEvidence(w io.Writer, xs []Exchange) (int, error) {
	type keyed struct {
		key string
		x   Exchange
	}
	byKey := map[string]keyed{}
	for _, x := range xs {
		if !slices.Contains(Ops, x.Op) {
			return 0, fmt.Errorf("op %q is not a literature operation", x.Op)
		}
		key, err := recordedKey(x.Op, x.Request)
		if err != nil {
			return 0, err
		}
		var reply bytes.Buffer
		if err := json.Compact(&reply, x.Reply); err != nil {
			return 0, fmt.Errorf("%s reply is not JSON: %v", x.Op, err)
		}
		x.Reply = reply.Bytes()
		if prev, ok := byKey[key]; ok {
			if !bytes.Equal(prev.x.Reply, x.Reply) {
				return 0, fmt.Errorf("the %s request %s has two different replies; record one run's evidence at a time", x.Op, x.Request)
			}
			continue
		}
		var req bytes.Buffer
		if err := json.Compact(&req, x.Request); err != nil {
			return 0, err
		}
		x.Request = req.Bytes()
		byKey[key] = keyed{key, x}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false) // the replies' bytes as recorded: "<" stays "<"
	for _, k := range keys {
		if err := enc.Encode(byKey[k].x); err != nil {
			return 0, err
		}
	}
	return len(keys), bw.Flush()
}
