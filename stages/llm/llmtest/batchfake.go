package llmtest

// An in-process fake of OpenAI's Files and Batch APIs, in the documented
// shapes: POST /v1/files (multipart, purpose "batch"), GET /v1/files/{id}
// and /v1/files/{id}/content, POST /v1/batches, GET /v1/batches/{id},
// POST /v1/batches/{id}/cancel and GET /v1/batches (newest first, limit and
// after). A batch moves validating -> in_progress -> finalizing ->
// completed one step per retrieval (or slower, by script), or ends failed
// (validation), expired or cancelled; its output file holds the 2xx lines
// and its error file the others, each {id, custom_id, response:
// {status_code, request_id, body}, error}. Answers are the chat fake's
// (Server), so a line's body is the reply a synchronous call would get.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// Batch statuses, as the API spells them.
const (
	BatchValidating = "validating"
	BatchFailed     = "failed"
	BatchInProgress = "in_progress"
	BatchFinalizing = "finalizing"
	BatchCompleted  = "completed"
	BatchExpired    = "expired"
	BatchCancelling = "cancelling"
	BatchCancelled  = "cancelled"
)

// Error codes of lines that never ran, as the API spells them.
const (
	LineBatchExpired   = "batch_expired"
	LineBatchCancelled = "batch_cancelled"
)

// BatchPlan scripts one batch.
type BatchPlan struct {
	// Hold is how many retrievals report each status before the next
	// (validating, in_progress, finalizing); 0 is 1.
	Hold int
	// End is how the batch ends: BatchCompleted (""), BatchFailed (as if
	// validation had refused it), or BatchExpired (the window ran out
	// while in progress). A cancel request ends it BatchCancelled.
	End string
	// Done is how many lines, in input order, ran before an expired or
	// cancelled batch stopped; the rest are reported with batch_expired or
	// batch_cancelled in the error file.
	Done int
	// Lines scripts lines by custom_id.
	Lines map[string]LineScript
}

// LineScript scripts one line of a batch.
type LineScript struct {
	// Fault shapes the answer as it would a synchronous reply (Text,
	// Usage, Reasoning, ServedModel...); a Status other than 200 puts the
	// line in the error file with that status_code and an error body.
	Fault Fault
	// Error puts the line in the error file with response null and this
	// error object code (e.g. "request_timeout").
	Error string
	// Drop leaves the line out of both files, as a service losing it would.
	Drop bool
}

// BatchCounts counts the calls a BatchServer received.
type BatchCounts struct {
	Uploads, Creates, Retrieves, Cancels, Lists, Downloads int
}

// BatchInfo is what a test may inspect of a batch.
type BatchInfo struct {
	ID, Status, InputFileID, OutputFileID, ErrorFileID string
	Metadata                                           map[string]string
	CustomIDs                                          []string // input lines, in order
	// RetrievesBefore is how many batch retrievals (polls) the server had
	// answered when this batch was created: batches of one round of a
	// client that polls only once a round is submitted share it.
	RetrievesBefore int
}

// BatchOption configures a BatchServer.
type BatchOption func(*BatchServer)

// WithBatchLimits makes validation refuse input files of more than
// requests lines or bytes bytes (0: no limit), as the API does at its
// documented limits; tests pass small ones to exercise splitting.
func WithBatchLimits(requests int, bytes int64) BatchOption {
	return func(s *BatchServer) { s.maxRequests, s.maxBytes = requests, bytes }
}

// WithBatchPlan scripts each batch: plan gets the batch's creation number
// (1-based) and its input lines' custom_ids. Without it every batch
// completes, one status per retrieval.
func WithBatchPlan(plan func(n int, customIDs []string) BatchPlan) BatchOption {
	return func(s *BatchServer) { s.plan = plan }
}

// BatchServer is the fake. It serves the chat fake's routes on the same
// URL too (chat completions, embeddings), so one provider block reaches
// both. All methods are safe for concurrent use.
type BatchServer struct {
	// URL is the base URL to configure a client with; it ends in /v1.
	URL string
	// Chat answers every line (and the synchronous routes).
	Chat *Server

	srv         *httptest.Server
	maxRequests int
	maxBytes    int64
	plan        func(n int, customIDs []string) BatchPlan

	mu        sync.Mutex
	seq       int
	files     map[string]*fakeFile
	batches   []*fakeBatch // creation order
	byID      map[string]*fakeBatch
	submitted map[string]int // custom_id -> lines carrying it in created batches
	executed  map[string]int // custom_id -> lines that ran (billed)
	counts    BatchCounts
	hook      func(route string, r *http.Request) bool
}

type fakeFile struct {
	obj     openai.File
	content []byte
}

type fakeBatch struct {
	obj     batchObject
	plan    BatchPlan
	lines   []inputLine
	ticks   int
	invalid []batchError // validation's findings: the batch fails
	after   int          // retrievals the server had answered when it was created
}

type inputLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

type batchError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	Line    *int    `json:"line"`
}

type batchErrors struct {
	Object string       `json:"object"`
	Data   []batchError `json:"data"`
}

type requestCounts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// batchObject is the batch object in its documented shape.
type batchObject struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Endpoint         string            `json:"endpoint"`
	Errors           *batchErrors      `json:"errors"`
	InputFileID      string            `json:"input_file_id"`
	CompletionWindow string            `json:"completion_window"`
	Status           string            `json:"status"`
	OutputFileID     *string           `json:"output_file_id"`
	ErrorFileID      *string           `json:"error_file_id"`
	CreatedAt        int64             `json:"created_at"`
	InProgressAt     *int64            `json:"in_progress_at"`
	ExpiresAt        *int64            `json:"expires_at"`
	FinalizingAt     *int64            `json:"finalizing_at"`
	CompletedAt      *int64            `json:"completed_at"`
	FailedAt         *int64            `json:"failed_at"`
	ExpiredAt        *int64            `json:"expired_at"`
	CancellingAt     *int64            `json:"cancelling_at"`
	CancelledAt      *int64            `json:"cancelled_at"`
	RequestCounts    requestCounts     `json:"request_counts"`
	Metadata         map[string]string `json:"metadata"`
}

// outputLine is one line of an output or error file.
type outputLine struct {
	ID       string        `json:"id"`
	CustomID string        `json:"custom_id"`
	Response *lineResponse `json:"response"`
	Error    *lineError    `json:"error"`
}

type lineResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

type lineError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// NewBatch starts a batch fake whose lines chat answers (nil: a new
// Server); Close it when done (it closes chat too).
func NewBatch(chat *Server, opts ...BatchOption) *BatchServer {
	if chat == nil {
		chat = New()
	}
	s := &BatchServer{Chat: chat, files: map[string]*fakeFile{}, byID: map[string]*fakeBatch{},
		submitted: map[string]int{}, executed: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/files", s.auth(RouteUpload, s.upload))
	mux.HandleFunc("GET /v1/files/{id}", s.auth(RouteFile, s.fileObject))
	mux.HandleFunc("GET /v1/files/{id}/content", s.auth(RouteDownload, s.fileContent))
	mux.HandleFunc("POST /v1/batches", s.auth(RouteCreate, s.create))
	mux.HandleFunc("GET /v1/batches", s.auth(RouteList, s.list))
	mux.HandleFunc("GET /v1/batches/{id}", s.auth(RouteRetrieve, s.retrieve))
	mux.HandleFunc("POST /v1/batches/{id}/cancel", s.auth(RouteCancel, s.cancel))
	mux.HandleFunc("/", chat.serve)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts both servers down.
func (s *BatchServer) Close() {
	s.srv.Close()
	s.Chat.Close()
}

// HTTPClient is a client for this server (see Server.HTTPClient).
func (s *BatchServer) HTTPClient() *http.Client { return s.srv.Client() }

// Submitted counts, per custom_id, the lines that carried it in created
// batches: a test asserts no request went out twice.
func (s *BatchServer) Submitted() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyCounts(s.submitted)
}

// Executed counts, per custom_id, the lines that ran (and would be billed).
func (s *BatchServer) Executed() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyCounts(s.executed)
}

// Counts is how many calls of each route the server received.
func (s *BatchServer) Counts() BatchCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Batches describes every batch created, in creation order.
func (s *BatchServer) Batches() []BatchInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]BatchInfo, len(s.batches))
	for i, b := range s.batches {
		out[i] = BatchInfo{ID: b.obj.ID, Status: b.obj.Status, InputFileID: b.obj.InputFileID,
			OutputFileID: deref(b.obj.OutputFileID), ErrorFileID: deref(b.obj.ErrorFileID), Metadata: b.obj.Metadata,
			RetrievesBefore: b.after}
		for _, l := range b.lines {
			out[i].CustomIDs = append(out[i].CustomIDs, l.CustomID)
		}
	}
	return out
}

// FileContent is the content of an uploaded or produced file (nil if none).
func (s *BatchServer) FileContent(id string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[id]; ok {
		return append([]byte(nil), f.content...)
	}
	return nil
}

// The batch routes, as SetHook names them.
const (
	RouteUpload   = "upload"   // POST /v1/files
	RouteFile     = "file"     // GET /v1/files/{id}
	RouteDownload = "download" // GET /v1/files/{id}/content
	RouteCreate   = "create"   // POST /v1/batches
	RouteList     = "list"     // GET /v1/batches
	RouteRetrieve = "retrieve" // GET /v1/batches/{id}
	RouteCancel   = "cancel"   // POST /v1/batches/{id}/cancel
)

// SetHook sets (nil: clears) a hook called before each batch route's
// request is handled. When it returns true the request is held, unhandled,
// until its client goes away: a test kills the client process there
// (during an upload, at the first poll after a submission, during a
// download) knowing the server did nothing with it.
func (s *BatchServer) SetHook(h func(route string, r *http.Request) (hold bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = h
}

func (s *BatchServer) auth(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		hook := s.hook
		s.mu.Unlock()
		if hook != nil && hook(route, r) {
			// Read to the end first: the server notices a client gone only
			// once it reads the connection again, after the body.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		if key := s.Chat.apiKey; key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			writeError(w, http.StatusUnauthorized, "Incorrect API key provided: "+r.Header.Get("Authorization")+".", "invalid_api_key", "")
			return
		}
		h(w, r)
	}
}

func (s *BatchServer) now() int64 { return s.Chat.now().Unix() }

// nextID is a fresh id with the API's prefix ("file-", "batch_", ...).
// Callers hold s.mu.
func (s *BatchServer) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%06d", prefix, s.seq)
}

func (s *BatchServer) upload(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "expected a multipart/form-data body: "+err.Error(), "", "")
		return
	}
	if p := r.FormValue("purpose"); p != string(openai.PurposeBatch) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("'%s' is not one of the purposes this fake serves: 'batch'", p), "", "")
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeError(w, http.StatusBadRequest, "missing file field: "+err.Error(), "", "")
		return
	}
	defer f.Close()
	content, err := io.ReadAll(f)
	if err != nil {
		writeError(w, http.StatusBadRequest, "read file: "+err.Error(), "", "")
		return
	}
	s.mu.Lock()
	s.counts.Uploads++
	file := s.addFile(hdr.Filename, string(openai.PurposeBatch), content)
	s.mu.Unlock()
	writeJSON(w, file.obj)
}

// addFile stores a file; callers hold s.mu.
func (s *BatchServer) addFile(name, purpose string, content []byte) *fakeFile {
	f := &fakeFile{content: content, obj: openai.File{ID: s.nextID("file-"), Object: "file", Bytes: len(content),
		CreatedAt: s.now(), FileName: name, Purpose: purpose, Status: "processed"}}
	s.files[f.obj.ID] = f
	return f
}

func (s *BatchServer) fileObject(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "No such File object: "+r.PathValue("id"), "", "")
		return
	}
	writeJSON(w, f.obj)
}

func (s *BatchServer) fileContent(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.PathValue("id")]
	if ok {
		s.counts.Downloads++
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "No such File object: "+r.PathValue("id"), "", "")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.content)))
	_, _ = w.Write(f.content)
}

func (s *BatchServer) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InputFileID      string            `json:"input_file_id"`
		Endpoint         string            `json:"endpoint"`
		CompletionWindow string            `json:"completion_window"`
		Metadata         map[string]string `json:"metadata"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid body: "+err.Error(), "", "")
		return
	}
	if req.Endpoint != string(openai.BatchEndpointChatCompletions) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("endpoint %q: this fake serves %s only", req.Endpoint, openai.BatchEndpointChatCompletions), "", "")
		return
	}
	if req.CompletionWindow != "24h" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid completion_window %q: only '24h' is supported", req.CompletionWindow), "", "")
		return
	}
	if len(req.Metadata) > 16 {
		writeError(w, http.StatusBadRequest, "metadata holds at most 16 pairs", "", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[req.InputFileID]
	if !ok || f.obj.Purpose != string(openai.PurposeBatch) {
		writeError(w, http.StatusBadRequest, "No such File object with purpose 'batch': "+req.InputFileID, "", "")
		return
	}
	s.counts.Creates++
	now := s.now()
	exp := now + 24*3600
	b := &fakeBatch{obj: batchObject{ID: s.nextID("batch_"), Object: "batch", Endpoint: req.Endpoint, InputFileID: req.InputFileID,
		CompletionWindow: req.CompletionWindow, Status: BatchValidating, CreatedAt: now, ExpiresAt: &exp, Metadata: req.Metadata}}
	b.lines, b.invalid = s.validate(f.content)
	for _, l := range b.lines {
		s.submitted[l.CustomID]++
	}
	if s.plan != nil {
		ids := make([]string, len(b.lines))
		for i, l := range b.lines {
			ids[i] = l.CustomID
		}
		b.plan = s.plan(len(s.batches)+1, ids)
	}
	b.obj.RequestCounts.Total = len(b.lines)
	b.after = s.counts.Retrieves
	s.batches = append(s.batches, b)
	s.byID[b.obj.ID] = b
	writeJSON(w, b.obj)
}

// validate reads an input file as the API does: JSON lines with unique
// custom_ids, method POST, the batch's endpoint, one model, within the
// limits. Whatever it finds fails the batch.
func (s *BatchServer) validate(content []byte) ([]inputLine, []batchError) {
	var lines []inputLine
	var errs []batchError
	bad := func(n int, code, msg string) {
		line := n
		errs = append(errs, batchError{Code: code, Message: msg, Line: &line})
	}
	if s.maxBytes > 0 && int64(len(content)) > s.maxBytes {
		errs = append(errs, batchError{Code: "too_large", Message: fmt.Sprintf("input file is %d bytes, over the %d-byte limit", len(content), s.maxBytes)})
	}
	seen := map[string]bool{}
	model := ""
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 1<<20), len(content)+1)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l inputLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			bad(n, "invalid_json_line", "line is not valid JSON: "+err.Error())
			continue
		}
		var body struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(l.Body, &body)
		switch {
		case l.CustomID == "":
			bad(n, "missing_required_parameter", "custom_id is required")
		case seen[l.CustomID]:
			bad(n, "duplicate_custom_id", "The custom_id for this request is a duplicate of another request.")
		case l.Method != http.MethodPost:
			bad(n, "invalid_method", "method must be POST")
		case l.URL != string(openai.BatchEndpointChatCompletions):
			bad(n, "mismatched_endpoint", "The provided URL does not match the batch endpoint.")
		case model != "" && body.Model != model:
			bad(n, "mismatched_model", "Each input file can only include requests to a single model.")
		}
		if model == "" {
			model = body.Model
		}
		seen[l.CustomID] = true
		lines = append(lines, l)
	}
	if s.maxRequests > 0 && len(lines) > s.maxRequests {
		errs = append(errs, batchError{Code: "too_many_requests", Message: fmt.Sprintf("input file has %d requests, over the %d-request limit", len(lines), s.maxRequests)})
	}
	return lines, errs
}

func (s *BatchServer) retrieve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.byID[r.PathValue("id")]
	if !ok {
		writeError(w, http.StatusNotFound, "No such Batch object: "+r.PathValue("id"), "", "")
		return
	}
	s.counts.Retrieves++
	s.step(b)
	writeJSON(w, b.obj)
}

// step advances b by one retrieval. Callers hold s.mu.
func (s *BatchServer) step(b *fakeBatch) {
	now := s.now()
	if b.obj.Status == BatchCancelling {
		s.finish(b, BatchCancelled, now)
		return
	}
	if terminal(b.obj.Status) {
		return
	}
	if b.ticks++; b.ticks < max(b.plan.Hold, 1) {
		return
	}
	b.ticks = 0
	switch b.obj.Status {
	case BatchValidating:
		if len(b.invalid) > 0 || b.plan.End == BatchFailed {
			if len(b.invalid) == 0 {
				b.invalid = []batchError{{Code: "invalid_request", Message: "scripted validation failure"}}
			}
			b.obj.Errors = &batchErrors{Object: "list", Data: b.invalid}
			b.obj.Status, b.obj.FailedAt = BatchFailed, &now
			return
		}
		b.obj.Status, b.obj.InProgressAt = BatchInProgress, &now
	case BatchInProgress:
		if b.plan.End == BatchExpired {
			s.finish(b, BatchExpired, now)
			return
		}
		b.obj.Status, b.obj.FinalizingAt = BatchFinalizing, &now
	case BatchFinalizing:
		s.finish(b, BatchCompleted, now)
	}
}

func terminal(status string) bool {
	switch status {
	case BatchCompleted, BatchFailed, BatchExpired, BatchCancelled:
		return true
	}
	return false
}

// finish runs the batch's lines (all of them, or the first plan.Done for an
// expired or cancelled batch), writes the output and error files and ends
// the batch in status. Callers hold s.mu.
func (s *BatchServer) finish(b *fakeBatch, status string, now int64) {
	ran := len(b.lines)
	unrun := ""
	switch status {
	case BatchExpired:
		ran, unrun = min(b.plan.Done, ran), LineBatchExpired
	case BatchCancelled:
		ran, unrun = min(b.plan.Done, ran), LineBatchCancelled
	}
	var out, errs bytes.Buffer
	for i, l := range b.lines {
		script := b.plan.Lines[l.CustomID]
		if script.Drop {
			continue
		}
		s.seq++
		ol := outputLine{ID: fmt.Sprintf("batch_req_%06d", s.seq), CustomID: l.CustomID}
		switch {
		case i >= ran:
			msg := "This request could not be executed before the completion window expired."
			if unrun == LineBatchCancelled {
				msg = "This request was not executed because the batch was cancelled."
			}
			ol.Error = &lineError{Code: unrun, Message: msg}
		case script.Error != "":
			s.executed[l.CustomID]++
			ol.Error = &lineError{Code: script.Error, Message: "scripted line error " + script.Error}
		default:
			s.executed[l.CustomID]++
			ol.Response = s.answer(l, script.Fault)
		}
		line, _ := json.Marshal(ol)
		dst := &out
		if ol.Error != nil || ol.Response.StatusCode != http.StatusOK {
			dst = &errs
			b.obj.RequestCounts.Failed++
		} else {
			b.obj.RequestCounts.Completed++
		}
		dst.Write(line)
		dst.WriteByte('\n')
	}
	if out.Len() > 0 {
		id := s.addFile("batch_"+b.obj.ID+"_output.jsonl", "batch_output", out.Bytes()).obj.ID
		b.obj.OutputFileID = &id
	}
	if errs.Len() > 0 {
		id := s.addFile("batch_"+b.obj.ID+"_error.jsonl", "batch_output", errs.Bytes()).obj.ID
		b.obj.ErrorFileID = &id
	}
	b.obj.Status = status
	switch status {
	case BatchCompleted:
		b.obj.CompletedAt = &now
	case BatchExpired:
		b.obj.ExpiredAt = &now
	case BatchCancelled:
		b.obj.CancelledAt = &now
	}
}

// answer is the line's response: the chat fake's reply to its body, under
// the line's fault. Callers hold s.mu.
func (s *BatchServer) answer(l inputLine, f Fault) *lineResponse {
	resp := &lineResponse{StatusCode: http.StatusOK, RequestID: fmt.Sprintf("req_%06d", s.seq)}
	if f.Status != 0 && f.Status != http.StatusOK {
		msg := f.Message
		if msg == "" {
			msg = http.StatusText(f.Status)
		}
		resp.StatusCode, resp.Body = f.Status, json.RawMessage(bytes.TrimSpace(errorBody(msg, f.Code, f.Type, f.Status)))
		return resp
	}
	chat := new(openai.ChatCompletionRequest)
	if err := json.Unmarshal(l.Body, chat); err != nil {
		resp.StatusCode = http.StatusBadRequest
		resp.Body = json.RawMessage(bytes.TrimSpace(errorBody("invalid chat request: "+err.Error(), "", "invalid_request_error", 400)))
		return resp
	}
	s.Chat.mu.Lock()
	respond := s.Chat.responder
	s.Chat.mu.Unlock()
	rec := &Request{Seq: s.seq, Time: s.Chat.now(), Path: chatPath, Body: l.Body, Chat: chat, Fault: f}
	body, _ := json.Marshal(s.Chat.chatReply(rec, respond))
	resp.Body = body
	return resp
}

func (s *BatchServer) cancel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.byID[r.PathValue("id")]
	if !ok {
		writeError(w, http.StatusNotFound, "No such Batch object: "+r.PathValue("id"), "", "")
		return
	}
	s.counts.Cancels++
	if terminal(b.obj.Status) {
		writeError(w, http.StatusConflict, fmt.Sprintf("Cannot cancel a batch with status '%s'.", b.obj.Status), "", "")
		return
	}
	now := s.now()
	b.obj.Status, b.obj.CancellingAt = BatchCancelling, &now
	writeJSON(w, b.obj)
}

// list pages through the batches newest first, as the API does: limit
// (default 20, at most 100) after the batch id given.
func (s *BatchServer) list(w http.ResponseWriter, r *http.Request) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "limit must be between 1 and 100", "", "")
			return
		}
		limit = n
	}
	after := r.URL.Query().Get("after")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Lists++
	newest := make([]batchObject, 0, len(s.batches))
	for i := len(s.batches) - 1; i >= 0; i-- {
		newest = append(newest, s.batches[i].obj)
	}
	if after != "" {
		i := len(newest) // an unknown cursor: nothing after it
		for j, b := range newest {
			if b.ID == after {
				i = j + 1
				break
			}
		}
		newest = newest[i:]
	}
	page := struct {
		Object  string        `json:"object"`
		Data    []batchObject `json:"data"`
		FirstID string        `json:"first_id"`
		LastID  string        `json:"last_id"`
		HasMore bool          `json:"has_more"`
	}{Object: "list", Data: newest[:min(limit, len(newest))], HasMore: len(newest) > limit}
	if len(page.Data) > 0 {
		page.FirstID, page.LastID = page.Data[0].ID, page.Data[len(page.Data)-1].ID
	}
	writeJSON(w, page)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode reply: "+err.Error(), "", "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// BatchLineTimeout is a line error code the API uses for a model call that
// timed out inside a batch; tests script it with LineScript.Error.
const BatchLineTimeout = "request_timeout"
