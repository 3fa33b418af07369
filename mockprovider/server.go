package mockprovider

import (
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/llm/inbound"
	"github.com/brownout-dev/brownout/llm/responses"
)

// Server is the HTTP face of one provider: it decodes requests in the
// provider's wire format, asks the Model for a plan and executes it on real
// time (flushing before every wait, so each event leaves when it is due),
// and serves the control API under /_mock/. It is a plain http.Handler.
type Server struct {
	model  *Model
	format *codecs.Format
	codec  llm.Codec
	ctl    http.Handler
	token  []byte // the control API's token; nil: open
	proxy  *proxy
	now    func() time.Time
}

// ServerOptions configure a Server. The zero value is ready to use.
type ServerOptions struct {
	// ProxyTo overrides the spec's proxy_to.
	ProxyTo string
	// Client sends proxied requests (default: a client without timeouts).
	Client *http.Client
	// Now is the clock (default time.Now); the model gets its readings.
	Now func() time.Time
	// ControlToken, when set, is required as "Authorization: Bearer TOKEN"
	// on the control API (/_mock/). Default empty: the control API is open
	// (keep the mock on loopback).
	ControlToken string
}

// maxBody bounds request bodies.
const maxBody = 32 << 20

// NewServer returns the handler of model m.
func NewServer(m *Model, opts ServerOptions) (*Server, error) {
	f, err := codecs.Lookup(m.Format())
	if err != nil {
		return nil, err
	}
	s := &Server{model: m, format: f, codec: f.Codec, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	target := opts.ProxyTo
	if target == "" {
		target = m.spec.ProxyTo
	}
	if target != "" {
		px, err := newProxy(target, opts.Client)
		if err != nil {
			return nil, err
		}
		s.proxy = px
	}
	s.ctl = newControl(m, s.now)
	if opts.ControlToken != "" {
		s.token = []byte(opts.ControlToken)
	}
	return s, nil
}

// Model returns the server's behaviour model.
func (s *Server) Model() *Model { return s.model }

// ServeHTTP routes control requests and chat requests.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_mock/") {
		if s.token != nil && !controlAuthorized(r, s.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brownout mock control"`)
			writeJSON(w, http.StatusUnauthorized, ControlError{Error: "control token required"})
			return
		}
		s.ctl.ServeHTTP(w, r)
		return
	}
	start := s.now()
	// A path of another API, or none, is answered in the shape its
	// client expects (inbound.Format), as a 404 of that API.
	model, stream, err := s.format.Route(r.URL.Path)
	if err != nil {
		inbound.WriteError(w, r, inbound.NotFound(inbound.Format(r.URL.Path, r.Header), r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = []string{http.MethodPost}
		s.writeError(w, inbound.MethodNotAllowed(r.Method, r.URL.Path, []string{http.MethodPost}))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return // the client went away
	}
	if len(body) > maxBody {
		s.writeError(w, &llm.Error{Status: 413, Type: llm.ErrInvalidRequest, Message: "request body too large"})
		return
	}
	req, err := s.codec.DecodeRequest(body)
	if err != nil {
		var le *llm.Error
		if !errors.As(err, &le) {
			le = llm.BadRequest("", "%v", err)
		}
		s.writeError(w, le)
		return
	}
	if model != "" {
		req.Model = model
	}
	if stream {
		req.Stream = true
	}
	meta := Meta{RequestID: r.Header.Get("X-Request-Id"), Stream: req.Stream}
	if s.model.NeedsHeaders() {
		meta.Headers = lowerHeaders(r.Header)
	}
	if s.proxy != nil {
		s.proxy.serve(s, w, r, start, req, body, meta)
		return
	}
	p := s.model.Plan(start, req, meta)
	x := &execution{s: s, w: w, r: r, start: start, plan: p, req: req}
	o, sent := x.run()
	s.model.FinishSent(s.now(), p, o, sent)
	x.end(o)
}

// end aborts the connection of a cut answer after sending what was written.
func (x *execution) end(o Outcome) {
	if o != OutcomeCut || x.hijacked {
		return
	}
	x.flush()
	// Abort the connection without the end of the body.
	panic(http.ErrAbortHandler)
}

func lowerHeaders(h http.Header) map[string]string {
	m := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			m[strings.ToLower(k)] = v[0]
		}
	}
	return m
}

func (s *Server) writeError(w http.ResponseWriter, e *llm.Error) { inbound.WriteErrorAs(w, s.codec, e) }

// execution runs one plan on one connection.
type execution struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	start time.Time
	plan  *Plan
	req   *llm.Request
	timer *time.Timer
	sent  int
	// headers is set once the status line is written; only then does
	// waiting flush.
	headers  bool
	hijacked bool
	// elapsed is a lower bound of the time since start (last clock reading).
	elapsed time.Duration
}

// wait sleeps until the offset due from the start, flushing first. It
// returns false when the client went away.
func (x *execution) wait(due time.Duration) bool {
	if due <= x.elapsed {
		return true // due already: no clock read (writes notice a gone client)
	}
	x.elapsed = x.s.now().Sub(x.start)
	d := due - x.elapsed
	if d <= 0 {
		return x.r.Context().Err() == nil
	}
	if x.headers {
		x.flush()
	}
	if x.timer == nil {
		x.timer = time.NewTimer(d)
	} else {
		x.timer.Reset(d)
	}
	select {
	case <-x.timer.C:
		x.elapsed = due
		return true
	case <-x.r.Context().Done():
		x.timer.Stop()
		return false
	}
}

func (x *execution) flush() {
	if f, ok := x.w.(http.Flusher); ok {
		f.Flush()
	}
}

// hijackClose closes the connection; with reset it sends a TCP RST.
func (x *execution) hijackClose(reset bool) {
	hj, ok := x.w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	x.hijacked = true
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func (x *execution) run() (Outcome, int) {
	p := x.plan
	switch {
	case p.Reset:
		// Journal first: the client learns of the close at once.
		x.s.model.FinishSent(x.s.now(), p, OutcomeReset, 0)
		x.hijackClose(true)
		return OutcomeReset, 0
	case p.HoldFor > 0:
		if !x.wait(p.HoldFor) {
			return OutcomeClientGone, 0
		}
		x.s.model.FinishSent(x.s.now(), p, OutcomeNoResponse, 0)
		x.hijackClose(false)
		return OutcomeNoResponse, 0
	}
	if !x.wait(p.HeaderDelay) {
		return OutcomeClientGone, 0
	}
	h := x.w.Header()
	for k, v := range p.Headers {
		h.Set(k, v)
	}
	if k, v := requestIDHeader(x.s.model.Format(), p.Seq); k != "" {
		h.Set(k, v)
	}
	if p.Status < 200 || p.Status > 299 {
		e := p.Err
		if e == nil {
			e = &llm.Error{Status: p.Status, Type: llm.TypeForStatus(p.Status), Message: http.StatusText(p.Status)}
		}
		x.s.writeError(x.w, e)
		return OutcomeError, 0
	}
	if p.Stream {
		return x.stream()
	}
	return x.unary()
}

func (x *execution) unary() (Outcome, int) {
	p := x.plan
	n := len(p.Chunks)
	if p.StallCloses() && (!p.Cuts() || p.StallAfter < p.CutAfter) {
		if !x.wait(p.End()) {
			return OutcomeClientGone, 0
		}
		x.s.model.FinishSent(x.s.now(), p, OutcomeCut, 0)
		x.hijackClose(false)
		return OutcomeCut, 0
	}
	if !x.wait(p.End()) {
		return OutcomeClientGone, 0
	}
	body, err := x.s.codec.EncodeResponse(&p.Response)
	if err != nil {
		x.s.writeError(x.w, &llm.Error{Status: 500, Type: llm.ErrServer, Message: "mock: " + err.Error()})
		return OutcomeError, 0
	}
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	switch {
	case p.Cuts():
		// Promise the whole body, send the share of it the cut allows, close.
		share := len(body) / 2
		if n > 0 {
			share = len(body) * min(p.CutAfter, n) / (n + 1)
		}
		x.w.WriteHeader(200)
		x.headers = true
		_, _ = x.w.Write(body[:share])
		return OutcomeCut, p.CutAfter
	case p.Malformed():
		body = malformBody(body)
		h.Set("Content-Length", strconv.Itoa(len(body)))
		x.w.WriteHeader(200)
		_, _ = x.w.Write(body)
		return OutcomeMalformed, n
	}
	x.w.WriteHeader(200)
	_, _ = x.w.Write(body)
	return OutcomeOK, n
}

// malformBody cuts a JSON body in the middle of a value and appends garbage.
func malformBody(body []byte) []byte {
	out := append([]byte(nil), body[:len(body)/2]...)
	return append(out, "\x00<<malformed>>"...)
}

func (x *execution) stream() (Outcome, int) {
	p := x.plan
	f := x.s.model.Format()
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(200)
	x.headers = true
	bw := x.w
	enc := x.s.codec.NewStreamEncoder(bw)
	startEv := llm.StreamEvent{Type: llm.EventStart, ID: p.Response.ID, Model: p.Response.Model}
	if f == llm.FormatAnthropic {
		u := llm.Usage{InputTokens: p.Response.Usage.InputTokens, CachedInputTokens: p.Response.Usage.CachedInputTokens, OutputTokens: 1}
		startEv.Usage = &u
	}
	if err := enc.Encode(startEv); err != nil {
		return OutcomeClientGone, 0
	}
	x.flush()
	n := len(p.Chunks)
	var delta llm.ToolCallDelta
	call := -1
	for i := 0; i <= n; i++ {
		if p.InBandErr != nil && i == p.InBandAfter {
			if i > 0 && !x.wait(p.TokenTimes[i-1]) {
				return OutcomeClientGone, x.sent
			}
			if err := enc.Encode(llm.StreamEvent{Type: llm.EventError, Err: p.InBandErr}); err != nil {
				return OutcomeClientGone, x.sent
			}
			return OutcomeError, x.sent
		}
		if i == p.CutAfter {
			return OutcomeCut, x.sent
		}
		if p.StallClose && i == p.StallAfter {
			due := p.TTFT
			if i > 0 {
				due = p.TokenTimes[i-1]
			}
			if !x.wait(due + p.StallFor) {
				return OutcomeClientGone, x.sent
			}
			return OutcomeCut, x.sent
		}
		if i == p.MalformedAt {
			if i < n && !x.wait(p.TokenTimes[i]) {
				return OutcomeClientGone, x.sent
			}
			_, _ = io.WriteString(bw, malformedEvent(f))
			if i < n {
				x.sent++
				continue
			}
		}
		if i == n {
			break
		}
		if !x.wait(p.TokenTimes[i]) {
			return OutcomeClientGone, x.sent
		}
		var ev llm.StreamEvent
		for call+1 < len(p.ToolStart) && p.ToolStart[call+1] <= i {
			call++
			tc := p.Response.ToolCalls[call]
			delta = llm.ToolCallDelta{Index: call, ID: tc.ID, Name: tc.Name}
		}
		if call >= 0 {
			delta.Arguments = p.Chunks[i]
			d := delta
			ev = llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &d}
			delta.ID, delta.Name = "", ""
		} else {
			ev = llm.StreamEvent{Type: llm.EventTextDelta, Text: p.Chunks[i]}
		}
		if err := enc.Encode(ev); err != nil {
			return OutcomeClientGone, x.sent
		}
		x.sent++
	}
	if err := enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: p.Response.FinishReason}); err != nil {
		return OutcomeClientGone, x.sent
	}
	if f != llm.FormatOpenAI || x.req.IncludeUsage {
		u := p.Response.Usage
		if err := enc.Encode(llm.StreamEvent{Type: llm.EventUsage, Usage: &u}); err != nil {
			return OutcomeClientGone, x.sent
		}
	}
	o := OutcomeOK
	if p.Malformed() {
		o = OutcomeMalformed
	}
	if p.NoDone {
		if o == OutcomeOK {
			o = OutcomeNoDone
		}
	} else if err := enc.Close(); err != nil {
		return OutcomeClientGone, x.sent
	}
	// No flush: the handler returns after journaling and net/http flushes,
	// so a client that sees the end finds the attempt journaled.
	return o, x.sent
}

// malformedEvent is an event whose data is not valid JSON, shaped like the
// format's token events up to the point where it breaks off.
func malformedEvent(f llm.Format) string {
	switch f {
	case llm.FormatAnthropic:
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"mal\n\n"
	case responses.Format:
		return "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_malformed\",\"output_index\":0,\"content_index\":0,\"delta\":\"mal\n\n"
	case llm.FormatGemini:
		return "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"mal\n\n"
	}
	return "data: {\"id\":\"chatcmpl-malformed\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"mal\n\n"
}

// requestIDHeader is the provider's own request id header (OpenAI
// x-request-id, Anthropic request-id; Gemini sends none), derived from the
// attempt's sequence number.
func requestIDHeader(f llm.Format, seq uint64) (string, string) {
	const hex = "0123456789abcdef"
	var b [32]byte
	v := seq * 0x9e3779b97f4a7c15
	for i := range b {
		b[i] = hex[(v>>(4*(i%16)))&0xf]
		if i == 15 {
			v = v*0xbf58476d1ce4e5b9 + seq
		}
	}
	switch f {
	case llm.FormatOpenAI, responses.Format:
		return "X-Request-Id", "req_" + string(b[:])
	case llm.FormatAnthropic:
		return "Request-Id", "req_011C" + string(b[:24])
	}
	return "", ""
}

// controlAuthorized reports whether r carries the control token, compared
// in constant time.
func controlAuthorized(r *http.Request, token []byte) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), token) == 1
}
