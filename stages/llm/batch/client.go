package batch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// Submission is one input file and its batch, as the journal knows it.
type Submission struct {
	ID      string
	Model   string
	Keys    []string
	FileID  string // once uploaded
	BatchID string // once submitted
	State   Op     // OpIntent, OpUploaded or OpSubmitted: the last step recorded
	Since   int64  // unix time of the intent
	// Collected: its results were handed over in this process, its done
	// deferred (Options.DeferDone) until Finish.
	Collected bool
}

// Client sends items through one provider's batch interface, recording
// every submission in its Journal. It is not safe for concurrent use: one
// run drives it (the journal's lock keeps other runs out).
type Client struct {
	api   llm.BatchAPI
	files *openai.Client
	j     Journal
	o     Options

	open      map[string]*Submission
	order     []string               // open submission ids, oldest first
	reqs      map[string]llm.Request // the request of each key the caller gave
	recovered bool
	pollErrs  int // transient poll failures in a row
}

// New makes a Client on c (a client of a kind implementing llm.BatchAPI:
// the openai kind) and the journal j, reading what j says is in flight.
func New(c llm.Client, j Journal, o Options) (*Client, error) {
	api, ok := c.(llm.BatchAPI)
	if !ok {
		return nil, fmt.Errorf("batch: this provider's kind has no batch interface (%T); batches need a provider of kind \"openai\"", c)
	}
	o.defaults()
	bc := &Client{api: api, files: api.FilesAPI(o.MaxDownloadBytes), j: j, o: o,
		open: map[string]*Submission{}, reqs: map[string]llm.Request{}}
	entries, err := j.Entries()
	if err != nil {
		return nil, fmt.Errorf("batch: read journal: %w", err)
	}
	subs, err := Replay(entries)
	if err != nil {
		return nil, err
	}
	for i := range subs {
		s := subs[i]
		bc.open[s.ID] = &s
		bc.order = append(bc.order, s.ID)
	}
	return bc, nil
}

// Replay is what a journal's entries say is open: the submissions not
// done, oldest first, each at its last recorded step. `ideaflow batches`
// lists them without a connection to the provider.
func Replay(entries []Entry) ([]Submission, error) {
	open := map[string]*Submission{}
	var order []string
	for i, e := range entries {
		s := open[e.Submission]
		if s == nil && e.Op != OpIntent {
			return nil, fmt.Errorf("batch: journal entry %d (%s of submission %q) has no intent before it; the journal is not one this client wrote", i+1, e.Op, e.Submission)
		}
		switch e.Op {
		case OpIntent:
			open[e.Submission] = &Submission{ID: e.Submission, Model: e.Model, Keys: e.Keys, State: OpIntent, Since: e.Time.Unix()}
			order = append(order, e.Submission)
		case OpUploaded:
			s.FileID, s.State = e.FileID, OpUploaded
		case OpSubmitted:
			s.BatchID, s.State = e.BatchID, OpSubmitted
		case OpDone:
			delete(open, e.Submission)
		default:
			return nil, fmt.Errorf("batch: journal entry %d has unknown op %q", i+1, e.Op)
		}
	}
	var out []Submission
	for _, id := range order {
		if s, ok := open[id]; ok {
			out = append(out, *s)
		}
	}
	return out, nil
}

// Open lists the submissions not yet done, oldest first: what `ideaflow
// batches` shows, and what Wait will collect.
func (c *Client) Open() []Submission {
	out := make([]Submission, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, *c.open[id])
	}
	return out
}

func (c *Client) forget(id string) {
	delete(c.open, id)
	for i, o := range c.order {
		if o == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

func (c *Client) record(e Entry) error {
	e.Time = c.o.Clock.Now()
	if err := c.j.Record(e); err != nil {
		return fmt.Errorf("batch: record %s of %s: %w", e.Op, e.Submission, err)
	}
	return nil
}

// Submit sends the items through batches: grouped by model (an input file
// holds one model's requests), cut into files within the limits, each
// recorded, uploaded and submitted. Items whose key an open submission
// already carries are not sent again (their answer comes from Wait), nor
// are repeated keys. What cannot go in a batch at all (one request over the
// file size limit) comes back as failed Results at once, for the caller
// to ask synchronously. On an error, submissions already made stay open
// and Wait collects them.
func (c *Client) Submit(ctx context.Context, items []Item) ([]Result, error) {
	if err := c.recover(ctx); err != nil {
		return nil, err
	}
	carried := map[string]bool{}
	for _, s := range c.open {
		if s.Collected {
			continue // its answers were handed over: a key of it asked again is a new request
		}
		for _, k := range s.Keys {
			carried[k] = true
		}
	}
	type file struct {
		model string
		keys  []string
		buf   bytes.Buffer
	}
	var files []*file
	cur := map[string]*file{}
	var rejected []Result
	for _, it := range items {
		c.reqs[it.Key] = it.Request
		if carried[it.Key] {
			continue
		}
		carried[it.Key] = true
		body, err := c.api.ChatRequest(it.Request)
		if err != nil {
			return rejected, fmt.Errorf("batch: %s: %w", it.Key, err)
		}
		line, err := json.Marshal(openai.BatchChatCompletionRequest{CustomID: it.Key, Method: http.MethodPost,
			URL: openai.BatchEndpointChatCompletions, Body: body})
		if err != nil {
			return rejected, fmt.Errorf("batch: encode %s: %w", it.Key, err)
		}
		line = append(line, '\n')
		if int64(len(line)) > c.o.MaxFileBytes {
			rejected = append(rejected, Result{Key: it.Key, Failure: &Failure{Kind: FailTooLarge,
				Message: fmt.Sprintf("the request is %d bytes, over the %d-byte batch file limit", len(line), c.o.MaxFileBytes)}})
			continue
		}
		f := cur[it.Request.Model]
		if f == nil || len(f.keys) == c.o.MaxRequests || int64(f.buf.Len()+len(line)) > c.o.MaxFileBytes {
			f = &file{model: it.Request.Model}
			cur[it.Request.Model] = f
			files = append(files, f)
		}
		f.keys = append(f.keys, it.Key)
		f.buf.Write(line)
	}
	for _, f := range files {
		if err := c.submit(ctx, f.model, f.keys, f.buf.Bytes()); err != nil {
			return rejected, err
		}
	}
	return rejected, nil
}

// submit records, uploads and creates one batch.
func (c *Client) submit(ctx context.Context, model string, keys []string, content []byte) error {
	s := &Submission{ID: c.o.NewID(), Model: model, Keys: keys, State: OpIntent, Since: c.o.Clock.Now().Unix()}
	if err := c.record(Entry{Op: OpIntent, Submission: s.ID, Model: model, Keys: keys}); err != nil {
		return err
	}
	c.open[s.ID] = s
	c.order = append(c.order, s.ID)
	f, err := c.files.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "ideaflow-" + s.ID + ".jsonl", Bytes: content, Purpose: openai.PurposeBatch})
	if err != nil {
		// No batch can exist: one is only created from a recorded upload.
		if rerr := c.record(Entry{Op: OpDone, Submission: s.ID, Note: "upload failed; nothing submitted"}); rerr == nil {
			c.forget(s.ID)
		}
		return fmt.Errorf("batch: upload %d requests for %s: %w", len(keys), model, err)
	}
	if err := c.record(Entry{Op: OpUploaded, Submission: s.ID, FileID: f.ID}); err != nil {
		return err
	}
	s.FileID, s.State = f.ID, OpUploaded
	return c.create(ctx, s)
}

// create creates s's batch from its uploaded file. A refusal the provider
// answered (a 4xx other than 408 and 429) created nothing and closes s; any
// other failure may have created the batch, so s stays uploaded and the
// next recovery looks for it before creating one.
func (c *Client) create(ctx context.Context, s *Submission) error {
	b, err := c.files.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: s.FileID, Endpoint: openai.BatchEndpointChatCompletions,
		CompletionWindow: c.o.CompletionWindow, Metadata: map[string]any{MetadataKey: s.ID}})
	if err != nil {
		if refused(err) {
			if rerr := c.record(Entry{Op: OpDone, Submission: s.ID, Note: "creation refused; nothing submitted: " + err.Error()}); rerr == nil {
				c.forget(s.ID)
			}
		}
		return fmt.Errorf("batch: create the batch of %s (%d requests): %w", s.ID, len(s.Keys), err)
	}
	if err := c.record(Entry{Op: OpSubmitted, Submission: s.ID, BatchID: b.ID}); err != nil {
		return err
	}
	s.BatchID, s.State = b.ID, OpSubmitted
	return nil
}

func refused(err error) bool {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status := 0
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// recover settles, once per Client, the submissions a previous run left
// mid-step: an intent without upload submitted nothing and is closed; an
// upload without a recorded batch is looked up by its metadata and
// created only if no batch carries it.
func (c *Client) recover(ctx context.Context) error {
	if c.recovered {
		return nil
	}
	for _, id := range append([]string(nil), c.order...) {
		if err := c.settle(ctx, c.open[id]); err != nil {
			return err
		}
	}
	c.recovered = true
	return nil
}

// settle brings a submission left before OpSubmitted to OpSubmitted or
// closes it; see recover.
func (c *Client) settle(ctx context.Context, s *Submission) error {
	switch s.State {
	case OpIntent:
		if err := c.record(Entry{Op: OpDone, Submission: s.ID, Note: "interrupted before its upload was recorded; nothing submitted"}); err != nil {
			return err
		}
		c.forget(s.ID)
	case OpUploaded:
		b, err := c.find(ctx, s)
		if err != nil {
			return err
		}
		if b == nil {
			return c.create(ctx, s)
		}
		if err := c.record(Entry{Op: OpSubmitted, Submission: s.ID, BatchID: b.ID}); err != nil {
			return err
		}
		s.BatchID, s.State = b.ID, OpSubmitted
	}
	return nil
}

// findSkew is how much older than its intent a batch may look (clocks
// differ) and still be searched: the listing is newest first, so the
// search stops at the first batch older than that.
const findSkew = 3600

// find pages through the provider's batches, newest first, for one whose
// metadata carries s's id.
func (c *Client) find(ctx context.Context, s *Submission) (*openai.Batch, error) {
	limit := 100
	var after *string
	for {
		page, err := c.files.ListBatch(ctx, after, &limit)
		if err != nil {
			return nil, fmt.Errorf("batch: look for the batch of %s: %w", s.ID, err)
		}
		for i := range page.Data {
			b := &page.Data[i]
			if v, _ := b.Metadata[MetadataKey].(string); v == s.ID {
				return b, nil
			}
			if int64(b.CreatedAt) < s.Since-findSkew {
				return nil, nil
			}
		}
		if !page.HasMore || len(page.Data) == 0 {
			return nil, nil
		}
		last := page.Data[len(page.Data)-1].ID
		after = &last
	}
}

// Wait polls every open submission until its batch ends, then hands each
// of its keys' Result to sink and closes the submission once sink has
// accepted them all. After a crash a submission's results may be handed
// over again (sink must accept a key twice, as a cache put does); a
// request is never submitted again. The first poll is immediate; then
// the wait starts at PollFirst and doubles to PollMax.
func (c *Client) Wait(ctx context.Context, sink func(Result) error) error {
	delay := c.o.PollFirst
	for {
		running, err := c.Poll(ctx, sink)
		if err != nil || running == 0 {
			return err
		}
		if err := c.o.Clock.Sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, c.o.PollMax)
	}
}

// Poll polls every open submission once, hands sink the results of those
// whose batch ended (as Wait does) and returns how many are still
// running: for a caller that must not block until they end (run
// --detach). A poll that fails transiently counts the batch as running;
// MaxPollErrors such failures in a row, across calls, end with an error.
func (c *Client) Poll(ctx context.Context, sink func(Result) error) (int, error) {
	if err := c.recover(ctx); err != nil {
		return 0, err
	}
	running := 0
	for _, id := range append([]string(nil), c.order...) {
		s := c.open[id]
		if s.Collected {
			continue
		}
		if s.State != OpSubmitted { // a creation this run could not confirm
			if err := c.settle(ctx, s); err != nil {
				return running, err
			}
			if s.State != OpSubmitted {
				continue // closed: it submitted nothing
			}
		}
		b, err := c.files.RetrieveBatch(ctx, s.BatchID)
		if err != nil {
			if c.pollErrs++; ctx.Err() != nil || refused(err) || c.pollErrs > c.o.MaxPollErrors {
				return running, fmt.Errorf("batch: poll %s (batch %s): %w", s.ID, s.BatchID, err)
			}
			running++ // still running, for all we know
			continue
		}
		c.pollErrs = 0
		if !ended(b.Status) {
			running++
			continue
		}
		results, err := c.collect(ctx, s, &b.Batch)
		if err != nil {
			return running, err
		}
		for _, r := range results {
			if err := sink(r); err != nil {
				return running, fmt.Errorf("batch: hand over %s: %w", r.Key, err)
			}
		}
		if c.o.DeferDone {
			s.Collected = true
			continue
		}
		if err := c.record(Entry{Op: OpDone, Submission: s.ID, BatchID: s.BatchID}); err != nil {
			return running, err
		}
		c.forget(s.ID)
	}
	return running, nil
}

// Finish records done for every submission whose results were handed
// over (Options.DeferDone): the caller calls it once what sink accepted is
// durable. Until then a crash leaves them open, and the next run collects
// them again.
func (c *Client) Finish() error {
	for _, id := range append([]string(nil), c.order...) {
		s := c.open[id]
		if !s.Collected {
			continue
		}
		if err := c.record(Entry{Op: OpDone, Submission: s.ID, BatchID: s.BatchID}); err != nil {
			return err
		}
		c.forget(s.ID)
	}
	return nil
}

// Cancel asks the provider to cancel an open submission's batch; Wait then
// collects what ran and reports the rest cancelled.
func (c *Client) Cancel(ctx context.Context, id string) error {
	if err := c.recover(ctx); err != nil {
		return err
	}
	s, ok := c.open[id]
	if !ok {
		return fmt.Errorf("batch: no open submission %q; `ideaflow batches` lists them", id)
	}
	if _, err := c.files.CancelBatch(ctx, s.BatchID); err != nil {
		return fmt.Errorf("batch: cancel %s (batch %s): %w", id, s.BatchID, err)
	}
	return nil
}

func ended(status string) bool {
	switch status {
	case "completed", "failed", "expired", "cancelled":
		return true
	}
	return false
}

// line is one line of an output or error file.
type line struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		RequestID  string          `json:"request_id"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// collect reads an ended batch's files into one Result per key of s, in
// s's order: every key gets an answer or a Failure.
func (c *Client) collect(ctx context.Context, s *Submission, b *openai.Batch) ([]Result, error) {
	mine := make(map[string]bool, len(s.Keys))
	for _, k := range s.Keys {
		mine[k] = true
	}
	got := map[string]Result{}
	if b.Status == "failed" {
		var msgs []string
		if b.Errors != nil {
			for _, e := range b.Errors.Data {
				m := e.Code + ": " + e.Message
				if e.Line != nil {
					m = fmt.Sprintf("line %d: %s", *e.Line, m)
				}
				msgs = append(msgs, m)
			}
		}
		for _, k := range s.Keys {
			got[k] = Result{Key: k, Failure: &Failure{Kind: FailBatch, Message: strings.Join(msgs, "; ")}}
		}
	}
	for _, fid := range []*string{b.OutputFileID, b.ErrorFileID} {
		if fid == nil || *fid == "" || b.Status == "failed" {
			continue
		}
		content, err := c.download(ctx, *fid)
		if err != nil {
			return nil, fmt.Errorf("batch: download file %s of %s: %w", *fid, s.ID, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(content))
		sc.Buffer(nil, len(content)+1)
		for sc.Scan() {
			var l line
			if json.Unmarshal(sc.Bytes(), &l) != nil || !mine[l.CustomID] {
				continue // unreadable or not ours: its key, if any, is reported missing
			}
			if _, dup := got[l.CustomID]; dup {
				continue
			}
			got[l.CustomID] = c.result(s, l)
		}
	}
	out := make([]Result, 0, len(s.Keys))
	for _, k := range s.Keys {
		r, ok := got[k]
		if !ok {
			f := &Failure{Kind: FailMissing, Message: "the batch ended (" + b.Status + ") without a line for this request"}
			switch b.Status {
			case "expired":
				f.Kind = FailExpired
			case "cancelled":
				f.Kind = FailCancelled
			}
			r = Result{Key: k, Failure: f}
		}
		r.Submission, r.BatchID = s.ID, b.ID
		out = append(out, r)
	}
	return out, nil
}

func (c *Client) result(s *Submission, l line) Result {
	r := Result{Key: l.CustomID}
	switch {
	case l.Error != nil:
		kind := FailLine
		switch l.Error.Code {
		case "batch_expired":
			kind = FailExpired
		case "batch_cancelled":
			kind = FailCancelled
		}
		r.Failure = &Failure{Kind: kind, Code: l.Error.Code, Message: l.Error.Message}
	case l.Response == nil:
		r.Failure = &Failure{Kind: FailUndecodable, Message: "line has neither response nor error"}
	case l.Response.StatusCode < 200 || l.Response.StatusCode > 299:
		var body struct {
			Error struct {
				Message string `json:"message"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(l.Response.Body, &body)
		f := &Failure{Kind: FailStatus, Status: l.Response.StatusCode, Message: body.Error.Message}
		if code, ok := body.Error.Code.(string); ok {
			f.Code = code
		}
		r.Failure = f
	default:
		req, ok := c.reqs[l.CustomID]
		if !ok {
			req = llm.Request{Model: s.Model} // resumed without the request: only the usage estimate needs it
		}
		resp, err := c.api.DecodeChat(req, l.Response.Body)
		if err != nil {
			r.Failure = &Failure{Kind: FailUndecodable, Status: l.Response.StatusCode, Message: err.Error()}
			break
		}
		resp.Status, resp.Attempts = l.Response.StatusCode, 1
		r.Response = resp
	}
	return r
}

func (c *Client) download(ctx context.Context, id string) ([]byte, error) {
	raw, err := c.files.GetFileContent(ctx, id)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	return io.ReadAll(raw)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sub_" + hex.EncodeToString(b[:])
}
