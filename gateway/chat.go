package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/inbound"
	"github.com/brownout-dev/brownout/llm/sse"
)

// Limits on bodies the gateway reads.
const (
	maxRequestBody   = 32 << 20
	maxResponseBody  = 32 << 20
	maxErrorBody     = 1 << 20
	maxReplayBody    = 4 << 20
	finishGraceLimit = time.Second
)

// Response headers the gateway adds.
const (
	HeaderTarget   = "X-Brownout-Target"   // provider:model that served
	HeaderAttempts = "X-Brownout-Attempts" // upstream attempts made
	HeaderTier     = "X-Brownout-Tier"     // degradation tier that served
	HeaderCache    = "X-Brownout-Cache"    // hit (fresh) or stale
	HeaderReplay   = "X-Brownout-Idempotent-Replay"
	HeaderHint     = "X-Brownout-Hint" // a client's preferred target (routes with allow_hints)
)

// exchange is one user request being served.
type exchange struct {
	s     *Server
	rt    *runtime
	w     http.ResponseWriter
	rc    *http.ResponseController
	in    llm.Codec
	req   *llm.Request
	id    string
	start time.Time
	hash  string

	promptTokens int

	// lc drives the request: the attempt loop, stream commit and in-band
	// error decisions (package lifecycle).
	lc lifecycle.Request

	// Stream state.
	committed  bool // the response headers were written
	enc        llm.StreamEncoder
	partial    strings.Builder // answer text that reached the client
	tools      []llm.ToolCall  // tool calls assembled from the deltas
	finish     llm.FinishReason
	usage      llm.Usage
	structured bool
	sentTokens int    // output deltas that reached the client
	servedBy   string // the target whose output the client received last
	respID     string
	model      string // the model that served

	// Complete answer (non-streamed, or accumulated for the cache).
	resp *llm.Response
	// rejected is the last non-streamed answer refused as invalid output,
	// kept for the detectors.
	rejected *llm.Response
	// raw is the upstream's body of resp when it is already in the client's
	// format: it is sent as is (no re-encoding).
	raw        []byte
	cacheAge   time.Duration
	cacheStale bool
	lastTarget string
	client     string // the client's ID (clients:), "" when open

	tr      *tracing.Request // the request's spans; nil when tracing is off
	upModel string           // the model the streamed attempt's upstream named (traces)
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, in llm.Codec) {
	s.m.inFlight.Inc()
	defer s.m.inFlight.Dec()
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 200 {
		id = s.newID()
	}
	w.Header()["X-Request-Id"] = []string{id}
	if in.Format() == llm.FormatAnthropic {
		w.Header()["Request-Id"] = []string{id} // the header Anthropic's SDKs read
	}
	pathModel, pathStream, err := routeFromPath(in, r.URL.Path)
	if err != nil {
		writeLLMError(w, in, asLLMError(err))
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeLLMError(w, in, &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Message: "reading the request body: " + err.Error()})
		return
	}
	req, err := in.DecodeRequest(body)
	if err != nil {
		var le *llm.Error
		if !errors.As(err, &le) {
			le = &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Message: err.Error()}
		}
		writeLLMError(w, in, le)
		return
	}
	if pathModel != "" {
		req.Model = pathModel
	}
	if pathStream {
		req.Stream = true
	}
	if req.Model == "" {
		writeLLMError(w, in, llm.BadRequest("model", "model is required: it names the gateway route"))
		return
	}

	if key := r.Header.Get("Idempotency-Key"); key != "" {
		s.serveIdempotent(w, r, in, req, key, body, id)
		return
	}
	x := s.newExchange(w, in, req, id)
	x.client = clientOf(r.Context())
	x.run(r.Context(), r.Header.Get(HeaderHint))
}

func (s *Server) newExchange(w http.ResponseWriter, in llm.Codec, req *llm.Request, id string) *exchange {
	return &exchange{s: s, rt: s.rt.Load(), w: w, rc: http.NewResponseController(w), in: in, req: req, id: id, start: time.Now()}
}

func readBody(r *http.Request) ([]byte, error) {
	if p, ok := r.Body.(*preread); ok { // read by the trust boundary (guard)
		return p.b, nil
	}
	n := r.ContentLength
	if n > maxRequestBody {
		return nil, errors.New("request body too large")
	}
	if n <= 0 {
		n = 4096
	}
	buf := make([]byte, 0, n+1)
	lr := io.LimitReader(r.Body, maxRequestBody+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(buf) > maxRequestBody {
		return nil, errors.New("request body too large")
	}
	return buf, nil
}

func writeLLMError(w http.ResponseWriter, in llm.Codec, e *llm.Error) {
	status, body := in.EncodeError(e)
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	if e.RetryAfter > 0 {
		h["Retry-After"] = []string{strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10)}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header()["Content-Type"] = []string{"application/json"}
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func estimateTokens(req *llm.Request) int {
	n := 0
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Content {
			n += len(m.Content[j].Text)
		}
		for j := range m.ToolCalls {
			n += len(m.ToolCalls[j].Arguments)
		}
	}
	for i := range req.Tools {
		n += len(req.Tools[i].Parameters) + len(req.Tools[i].Description)
	}
	return n/4 + 1
}

// run drives the request through the decision core until it is answered.
//
// A streaming request's goroutine keeps, while the stream is held, the
// stack its deepest call needed (the runtime shrinks a stack only when a
// quarter of it is in use): run and the steps it calls keep their frames
// small, and the cold paths are methods of their own (go:noinline), so the
// decision core's calls stay within 8 KiB. The stream's first flush still
// takes it to 16 KiB (net/http writes the response headers with a 2.8 KB
// frame), and so does dialing a new upstream connection; doing both on
// goroutines of their own keeps a held stream at 8 KiB (about 7 KB less per
// stream in BenchmarkCompare/streams) for about 10 µs more to the first
// token, a trade not taken.
func (x *exchange) run(ctx context.Context, hint string) {
	x.tr = x.s.tracer.Begin(ctx, x.id, x.req, x.rt.redact)
	cacheable := x.rt.cacheable[x.req.Model]
	if x.serveExact(ctx, cacheable) {
		return
	}
	x.begin(hint)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		d := x.lc.Next(time.Now())
		switch d.Kind {
		case policy.Send:
			x.attempt(ctx, &d.Decision)
		case policy.Wait:
			wait := time.Until(d.Until)
			if wait > 0 {
				x.tr.Wait(wait, d.Target)
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				select {
				case <-timer.C:
				case <-ctx.Done():
					if e := shutdownError(ctx, x.committed); e != nil {
						x.lc.Shutdown(time.Now(), e) // request.end: failed, 503, shutdown
					} else {
						x.lc.Cancel(time.Now()) // request.end: failed, 499, client_canceled
					}
					x.cutByShutdown(ctx)
					return
				}
			}
		case policy.ServeCached:
			x.observeCached(ctx)
		case policy.Fail:
			if !x.cutByShutdown(ctx) {
				x.fail(&d)
			}
			return
		case policy.Done:
			x.done(&d.Decision, cacheable)
			return
		default:
			x.unknown(&d.Decision)
			return
		}
	}
}

// serveExact answers from the exact-match cache (routes with cache.exact).
//
//go:noinline
func (x *exchange) serveExact(ctx context.Context, cacheable bool) bool {
	x.promptTokens = estimateTokens(x.req)
	if !cacheable {
		return false
	}
	x.hash = requestHash(x.req)
	if !x.rt.cfg.Cache.Exact {
		return false
	}
	e, age, fresh, ok := x.s.cache.get(ctx, time.Now(), x.req.Model, x.hash)
	if !ok || !fresh {
		return false
	}
	x.raw = nil
	x.s.m.cacheLookups.WithLabelValues("hit").Inc()
	x.resp, x.cacheAge = e.resp, age
	x.w.Header()[HeaderCache] = []string{"hit"}
	if x.tr != nil {
		x.traceServed(e.target, "cache", 0)
	}
	x.writeAnswer(e.target, 0, "cache")
	return true
}

// begin starts the request's attempt in the decision core.
//
//go:noinline
func (x *exchange) begin(hint string) {
	x.structured = x.req.ResponseFormat != nil && x.req.ResponseFormat.Type != llm.ResponseText && x.req.ResponseFormat.Type != ""
	if rc := x.rt.routeCfg(x.req.Model); rc != nil && rc.Structured {
		x.structured = true
	}
	x.lc.Begin(x.rt.engine, time.Now(), policy.Request{
		ID: x.id, Route: x.req.Model, PromptTokens: x.promptTokens,
		Stream: x.req.Stream, Structured: x.structured, Tools: len(x.req.Tools) > 0, Hint: hint,
		Client: x.client,
	})
}

// attempt carries out a Send decision and reports its outcome.
//
//go:noinline
func (x *exchange) attempt(ctx context.Context, d *policy.Decision) {
	key := d.Target.Key()
	if x.lastTarget != "" && x.lastTarget != key {
		x.s.m.fallbacks.WithLabelValues(x.req.Model, x.lastTarget, key).Inc()
	}
	x.lastTarget = key
	var o policy.Outcome
	if x.req.Stream {
		o = x.sendStream(ctx, d)
	} else {
		o = x.sendOnce(ctx, d)
	}
	if x.tr != nil {
		x.traceAttempt(d, &o)
	}
	now := time.Now()
	if o.Class == policy.ClientCanceled {
		if e := shutdownError(ctx, x.committed); e != nil {
			// Not the client: the gateway's own drain deadline cut it.
			o.Class, o.Err, o.Status = policy.Shutdown, e, 0
		}
	}
	x.lc.Observe(now, o)
	switch {
	case o.Class == policy.OK:
		x.detect(now, d.Target, x.resp)
	case o.Class == policy.InvalidOutput && x.rejected != nil:
		// Rejected answers are complete upstream answers too: the
		// detectors must see them (evals/doc.go), or a target whose JSON
		// broke is only ever caught by passive health.
		x.detect(now, d.Target, x.rejected)
		x.rejected = nil
	}
}

// observeCached carries out a ServeCached decision.
//
//go:noinline
func (x *exchange) observeCached(ctx context.Context) {
	if x.serveCachedLookup(ctx) {
		x.lc.Observe(time.Now(), policy.Outcome{Class: policy.OK})
	} else {
		x.lc.Observe(time.Now(), policy.Outcome{Class: policy.CacheMiss})
	}
}

// fail carries out a Fail decision.
//
//go:noinline
func (x *exchange) fail(d *lifecycle.Step) {
	if x.tr != nil {
		x.traceFailed(cmp.Or(d.InBand, d.Err))
	}
	if d.InBand != nil {
		// Never a clean end after a truncated answer; and never let a
		// fall-back's own error (it may reject the prefill) mask the
		// failure that cut the stream.
		x.streamError(d.InBand)
		return
	}
	writeLLMError(x.w, x.in, d.Err)
}

// cutByShutdown ends a request cut at the server's drain deadline (see
// Server.Serve) with the shutdown error: in-band after a committed stream,
// a 503 otherwise. False for any other request.
//
//go:noinline
func (x *exchange) cutByShutdown(ctx context.Context) bool {
	e := shutdownError(ctx, x.committed)
	if e == nil {
		return false
	}
	if x.tr != nil {
		x.traceFailed(e)
	}
	if x.committed {
		x.streamError(e)
	} else {
		writeLLMError(x.w, x.in, e)
	}
	return true
}

// done carries out a Done decision: the answer is complete.
//
//go:noinline
func (x *exchange) done(d *policy.Decision, cacheable bool) {
	target := ""
	if d.Target != nil {
		target = d.Target.Key()
	}
	if d.Tier == policy.TierCached {
		x.w.Header()[HeaderCache] = []string{"stale"}
		target = x.lastTarget
	}
	put := cacheable && d.Tier != policy.TierCached && x.resp != nil
	if x.tr != nil {
		x.traceServed(cmp.Or(x.servedBy, target), d.Tier, x.lc.Attempts())
	}
	if x.req.Stream && x.committed {
		if x.servedBy != "" {
			x.w.Header()[HeaderTarget] = []string{x.servedBy} // the trailer
		}
		_ = x.enc.Close()
		_ = x.rc.Flush()
		if put {
			x.s.cache.put(time.Now(), x.req.Model, target, x.hash, x.resp)
		}
		return
	}
	if put {
		x.s.cache.put(time.Now(), x.req.Model, target, x.hash, x.resp)
	}
	x.writeAnswer(target, x.lc.Attempts(), d.Tier)
}

// unknown answers a decision this shell does not know.
//
//go:noinline
func (x *exchange) unknown(d *policy.Decision) {
	writeLLMError(x.w, x.in, &llm.Error{Status: 500, Type: llm.ErrServer, Message: "gateway: unknown decision " + d.Kind.String()})
}

// serveCachedLookup finds a cached answer for the cached tier.
func (x *exchange) serveCachedLookup(ctx context.Context) bool {
	if x.hash == "" {
		x.hash = requestHash(x.req)
	}
	e, age, fresh, ok := x.s.cache.get(ctx, time.Now(), x.req.Model, x.hash)
	if !ok {
		x.s.m.cacheLookups.WithLabelValues("miss").Inc()
		return false
	}
	if fresh {
		x.s.m.cacheLookups.WithLabelValues("hit").Inc()
	} else {
		x.s.m.cacheLookups.WithLabelValues("stale").Inc()
	}
	x.resp, x.raw, x.cacheAge, x.cacheStale = e.resp, nil, age, !fresh
	x.lastTarget = e.target
	return true
}

// writeAnswer writes a complete answer (x.resp) to the client, as one JSON
// body or, for a stream, as the events of one.
func (x *exchange) writeAnswer(target string, attempts int, tier string) {
	h := x.w.Header()
	h[HeaderTarget] = []string{target}
	h[HeaderAttempts] = []string{strconv.Itoa(attempts)}
	h[HeaderTier] = []string{tier}
	if x.cacheAge > 0 {
		h["Age"] = []string{strconv.FormatInt(int64(x.cacheAge/time.Second), 10)}
	}
	// The client sees the model it asked for and IDs in its format's
	// style; the serving target is in the header.
	resp := inbound.Present(x.resp, x.in.Format(), x.req.Model)
	if !x.req.Stream {
		body, err := x.raw, error(nil)
		if body == nil || resp != x.resp {
			body, err = x.in.EncodeResponse(resp)
		}
		if err != nil {
			writeLLMError(x.w, x.in, &llm.Error{Status: 502, Type: llm.ErrServer, Message: "gateway: the answer cannot be written in this format: " + err.Error()})
			return
		}
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		x.w.WriteHeader(http.StatusOK)
		_, _ = x.w.Write(body)
		return
	}
	x.commitStream()
	enc := x.enc
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: resp.ID, Model: resp.Model,
		Usage: &llm.Usage{InputTokens: resp.Usage.InputTokens, CachedInputTokens: resp.Usage.CachedInputTokens}})
	if resp.Content != "" {
		_ = enc.Encode(llm.StreamEvent{Type: llm.EventTextDelta, Text: resp.Content})
	}
	for i, tc := range resp.ToolCalls {
		_ = enc.Encode(llm.StreamEvent{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}})
	}
	_ = enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: resp.FinishReason})
	if x.wantUsage() {
		u := resp.Usage
		_ = enc.Encode(llm.StreamEvent{Type: llm.EventUsage, Usage: &u})
	}
	_ = enc.Close()
	_ = x.rc.Flush()
}

func (x *exchange) wantUsage() bool { return x.req.IncludeUsage || x.in.Format() != llm.FormatOpenAI }

// commitStream writes the stream's headers: from here on the client sees
// what happens.
func (x *exchange) commitStream() {
	if x.committed {
		return
	}
	x.committed = true
	h := x.w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"}
	// The target that produced the end of the answer, once known: another
	// one when a fall-back continued it.
	h["Trailer"] = []string{HeaderTarget}
	x.w.WriteHeader(http.StatusOK)
	x.enc = x.in.NewStreamEncoder(x.w)
}

// streamError ends a committed stream with an explicit in-band error event
// (OpenAI error chunk, Anthropic `event: error`), never the end marker.
func (x *exchange) streamError(e *llm.Error) {
	if e == nil {
		e = &llm.Error{Status: 502, Type: llm.ErrServer, Message: "the upstream stream failed"}
	}
	_ = x.enc.Encode(llm.StreamEvent{Type: llm.EventError, Err: e})
	_ = x.rc.Flush()
}

// watchdogError is the cancellation cause when an attempt's watchdog fires.
type watchdogError struct{ class policy.Class }

func (e *watchdogError) Error() string { return "watchdog: " + string(e.class) }

// errFinishedNoEnd cancels a stream whose upstream sent its finish reason
// but not its end marker within the grace period.
var errFinishedNoEnd = errors.New("finished without end marker")

// watch runs a lifecycle.Watchdog on real time: one timer per attempt, set
// to the watchdog's next deadline — moved earlier when a token brings one
// ahead (the idle gap and the rate floor count from the first token on),
// and on to the next when it rings early.
type watch struct {
	mu     sync.Mutex
	wd     lifecycle.Watchdog
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

func newWatch(start time.Time, t policy.Timeouts, cancel context.CancelCauseFunc) *watch {
	w := &watch{cancel: cancel}
	w.mu.Lock()
	if d := w.wd.Start(start, t); !d.IsZero() {
		w.timer = time.AfterFunc(time.Until(d), w.fire)
	}
	w.mu.Unlock()
	return w
}

// arm sets the timer to d. The caller holds mu.
func (w *watch) arm(d time.Time) {
	if w.timer == nil {
		w.timer = time.AfterFunc(time.Until(d), w.fire)
		return
	}
	w.timer.Reset(time.Until(d))
}

func (w *watch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch v, c, next := w.wd.Fire(time.Now()); v {
	case lifecycle.Expired:
		w.cancel(&watchdogError{c})
	case lifecycle.Finished:
		w.cancel(errFinishedNoEnd)
	default:
		if !next.IsZero() {
			w.arm(next)
		}
	}
}

func (w *watch) token(now time.Time) {
	w.mu.Lock()
	if d, ok := w.wd.Token(now, 1); ok {
		w.arm(d)
	}
	w.mu.Unlock()
}

func (w *watch) ttft() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wd.TTFT()
}

// finish arms the short grace for the end marker after a finish reason.
func (w *watch) finish() {
	w.mu.Lock()
	w.arm(w.wd.Finish(time.Now()))
	w.mu.Unlock()
}

func (w *watch) stop() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
}

// attemptCtx derives an attempt's context: total deadline, connect timeout
// for the dialer, and a cancel cause for the watchdog.
func attemptCtx(ctx context.Context, d *policy.Decision, now time.Time) (context.Context, context.CancelCauseFunc, context.CancelFunc) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	var cancel context.CancelFunc = func() {}
	if !d.Deadlines.Total.IsZero() {
		ctx, cancel = context.WithDeadlineCause(ctx, d.Deadlines.Total, &watchdogError{policy.TimeoutTotal})
	}
	if !d.Deadlines.Connect.IsZero() {
		ctx = withConnectTimeout(ctx, d.Deadlines.Connect.Sub(now))
	}
	return ctx, cancelCause, cancel
}

// transportEnd tells how an attempt ended from an error sending its
// request or reading its answer: the client left, a deadline or the
// watchdog fired (class), the connection was never made, or it broke.
func transportEnd(parent, ctx context.Context, err error) (lifecycle.End, policy.Class) {
	if parent.Err() != nil {
		return lifecycle.ClientGone, ""
	}
	var we *watchdogError
	if errors.As(context.Cause(ctx), &we) {
		return lifecycle.TimedOut, we.class
	}
	var cte *connectTimeoutError
	var oe *net.OpError
	if errors.As(err, &cte) || (errors.As(err, &oe) && oe.Op == "dial") {
		return lifecycle.Refused, ""
	}
	var pe *protocolError
	if errors.As(err, &pe) {
		return lifecycle.Protocol, ""
	}
	return lifecycle.Broken, ""
}

// transportOutcome classifies an error from sending a request.
func transportOutcome(parent, ctx context.Context, err error) policy.Outcome {
	var o lifecycle.Observation
	o.End, o.Timeout = transportEnd(parent, ctx, err)
	var pe *protocolError
	if o.End == lifecycle.Protocol && errors.As(err, &pe) {
		o.Status = pe.status
		o.Err = &llm.Error{Status: 502, Type: llm.ErrServer, Code: string(policy.ProtocolError), Message: pe.Error()}
	}
	return lifecycle.Classify(&o)
}

// prepare builds the upstream request of a Send decision. A request the
// target's format cannot express is a skipped outcome (nothing is sent;
// another target may take it), not a gateway error.
func (x *exchange) prepare(ctx context.Context, d *policy.Decision, stream bool) (*http.Request, *upstream, *policy.Outcome) {
	u := x.rt.upstreams[d.Target.Provider]
	if u == nil {
		return nil, nil, &policy.Outcome{Class: policy.Auth, Err: &llm.Error{Status: 500, Type: llm.ErrServer, Message: "no provider named " + d.Target.Provider}}
	}
	req, err := d.Target.Request(x.req)
	if err != nil {
		return nil, nil, &policy.Outcome{Class: policy.BadRequestParam, Status: 400, Err: llm.BadRequest("", "%v", err)}
	}
	req.Stream = stream
	req.IncludeUsage = stream && u.streamUsage
	if d.Prefill && x.partial.Len() > 0 {
		msgs := make([]llm.Message, len(req.Messages), len(req.Messages)+1)
		copy(msgs, req.Messages)
		req.Messages = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart(x.partial.String())}})
		if req.MaxTokens > 0 {
			// The continuation budget: what the client asked for, less
			// what it already received. (A replay regenerates the whole
			// answer, so it keeps the whole budget.)
			req.MaxTokens = max(1, req.MaxTokens-x.sentTokens)
		}
	}
	hr, err := u.newRequest(ctx, req, x.id)
	if err != nil {
		var ue *llm.UnsupportedError
		if errors.As(err, &ue) {
			// Not sent: an explicit skip, with the reason, not an attempt.
			return nil, nil, &policy.Outcome{Class: policy.Skipped, Status: 400,
				Err: &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Param: ue.Feature, Message: ue.Error()}}
		}
		return nil, nil, &policy.Outcome{Class: policy.BadRequestParam, Status: 400, Err: llm.BadRequest("", "%v", err)}
	}
	x.tr.Send(d, u.name, string(u.kind), hr) // the client span; traceparent
	return hr, u, nil
}

// errorOutcome reads a non-2xx answer that came ttft after the attempt
// began.
func errorOutcome(u *upstream, resp *http.Response, ttft time.Duration) policy.Outcome {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := u.codec.DecodeError(resp.StatusCode, resp.Header, body)
	return lifecycle.Classify(&lifecycle.Observation{Status: resp.StatusCode, Err: e, TTFT: ttft})
}

// sendOnce makes one non-streamed attempt.
func (x *exchange) sendOnce(parent context.Context, d *policy.Decision) policy.Outcome {
	start := time.Now()
	ctx, cancelCause, cancel := attemptCtx(parent, d, start)
	defer cancel()
	defer cancelCause(nil)
	hr, u, bad := x.prepare(ctx, d, false)
	if bad != nil {
		return *bad
	}
	w := newWatch(start, policy.Timeouts{FirstToken: d.Timeouts.FirstToken, Total: d.Timeouts.Total}, cancelCause)
	defer w.stop()
	resp, err := u.do(hr)
	if err != nil {
		return transportOutcome(parent, ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errorOutcome(u, resp, time.Since(start))
	}
	// The first-token deadline runs until the first byte of the body: some
	// servers send a 200 header at once and the answer much later.
	fb := &firstByte{r: resp.Body, w: w}
	body, err := io.ReadAll(io.LimitReader(fb, maxResponseBody))
	obs := lifecycle.Observation{Status: resp.StatusCode, TTFT: fb.at.Sub(start), PromptTokens: x.promptTokens}
	if err != nil {
		obs.End, obs.Timeout = transportEnd(parent, ctx, err)
		obs.TTFT = 0
		if obs.End == lifecycle.Broken {
			obs.End = lifecycle.Cut // the body broke off after its headers
		}
		return lifecycle.Classify(&obs)
	}
	r, err := u.codec.DecodeResponse(body)
	if err != nil {
		obs.End = lifecycle.Malformed
		return lifecycle.Classify(&obs)
	}
	if r.Model == "" {
		r.Model = d.Target.Model
	}
	obs.Usage, obs.HaveUsage = r.Usage, true
	if x.structured && len(r.ToolCalls) == 0 && !json.Valid([]byte(r.Content)) {
		// A structured answer that does not parse is not served: another
		// target may produce a valid one.
		x.rejected = r
		obs.Invalid = true
		return lifecycle.Classify(&obs)
	}
	x.resp = r
	x.raw = nil
	if u.codec.Format() == x.in.Format() {
		x.raw = body
	}
	return lifecycle.Classify(&obs)
}

// firstByte notes when the first byte of a body arrives.
type firstByte struct {
	r  io.Reader
	w  *watch
	at time.Time
}

func (f *firstByte) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.at.IsZero() {
		f.at = time.Now()
		f.w.token(f.at)
	}
	return n, err
}

// sendStream makes one streamed attempt, forwarding each event to the client
// as it arrives. Nothing is written before the attempt's first token, so a
// failure before it is invisible to the client.
func (x *exchange) sendStream(parent context.Context, d *policy.Decision) policy.Outcome {
	start := time.Now()
	ctx, cancelCause, cancel := attemptCtx(parent, d, start)
	defer cancel()
	defer cancelCause(nil)
	hr, u, bad := x.prepare(ctx, d, true)
	if bad != nil {
		return *bad
	}
	w := newWatch(start, d.Timeouts, cancelCause)
	defer w.stop()
	resp, err := u.do(hr)
	if err != nil {
		return transportOutcome(parent, ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errorOutcome(u, resp, time.Since(start))
	}
	o := x.relay(parent, ctx, d, u, resp, w)
	if o.Class == policy.OK {
		drainEnd(resp.Body, cancelCause)
	}
	return o
}

// Reading what follows an answer's end marker (see drainEnd).
const (
	drainWait = 100 * time.Millisecond
	drainMax  = 16 << 10
)

var errDrainTimeout = errors.New("no end of body after the end marker")

// drainEnd reads what follows a stream's end marker (the chunked
// terminator, often in a write of its own) so that the transport pools the
// connection: a body closed before its end closes it. It waits drainWait at
// most, then cancels the attempt's context, and reads drainMax bytes at
// most.
func drainEnd(body io.Reader, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainWait, func() { cancel(errDrainTimeout) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, drainMax)
}

// relay forwards the events of an attempt's answer (body) to the client.
// It is apart from sendStream so that the calls sendStream makes before the
// answer (encoding, sending) run on a shallow stack (see run).
//
// When part of the answer already reached the client (a continuation, d
// sets Prefill or Replay), every output of the attempt goes through a
// lifecycle.Continuation first: only what it lets through is forwarded,
// and a divergence ends the attempt (Observation.Diverged).
//
//go:noinline
func (x *exchange) relay(parent, ctx context.Context, d *policy.Decision, u *upstream, resp *http.Response, w *watch) policy.Outcome {
	continuing := x.committed // a continuation of a partial answer
	// Events are flushed to the client before the attempt waits for more
	// upstream input, not one by one: events that arrived together leave
	// in one write, and nothing that arrived waits on the network.
	lf := &lazyFlush{r: resp.Body, flush: func() { _ = x.rc.Flush() }}
	defer lf.now()
	dec := u.codec.NewStreamDecoder(lf)
	var (
		tokens    int
		usage     *llm.Usage
		finish    llm.FinishReason
		upID      string
		upStart   *llm.Usage // the usage the upstream's start reported
		obs       = lifecycle.Observation{Status: resp.StatusCode}
		ended     bool // obs.End is known
		finished  bool
		malformed int
		cont      *continuation
	)
	if continuing {
		cont = x.newContinuation(d)
	}
	flush := func() { lf.pending = true }
	emit := func(ev llm.StreamEvent) bool {
		if err := x.enc.Encode(ev); err != nil {
			return false
		}
		flush()
		return true
	}
	// start commits the client stream at the first token of the first attempt.
	begin := func() {
		if x.committed {
			return
		}
		h := x.w.Header()
		h[HeaderTarget] = []string{d.Target.Key()}
		h[HeaderAttempts] = []string{strconv.Itoa(d.Try)}
		h[HeaderTier] = []string{d.Tier}
		x.commitStream()
		// The client sees the model it asked for and an ID in its
		// format's style (see writeAnswer).
		x.respID = upID
		if x.respID == "" {
			x.respID = x.id
		}
		x.respID = inbound.ResponseID(x.in.Format(), x.respID)
		x.model = x.req.Model
		// The input tokens as the upstream's start reported them, else
		// the gateway's estimate; the final usage has the billed count.
		start := upStart
		if start == nil || start.InputTokens == 0 {
			start = &llm.Usage{InputTokens: x.promptTokens}
		}
		_ = x.enc.Encode(llm.StreamEvent{Type: llm.EventStart, ID: x.respID, Model: x.model, Usage: start})
	}
	for {
		ev, err := dec.Next()
		if err != nil {
			var ee *sse.EventError
			switch {
			case err == io.EOF || (finished && errors.Is(context.Cause(ctx), errFinishedNoEnd)):
				obs.End = lifecycle.Answered
				if cont != nil && !cont.check(x, d, emit, cont.v.End) {
					obs.Diverged = true
				}
			case parent.Err() != nil:
				obs.End = lifecycle.ClientGone
			case errors.Is(err, io.ErrUnexpectedEOF):
				obs.End, obs.Timeout = transportEnd(parent, ctx, err)
				if obs.End == lifecycle.Broken {
					obs.End = lifecycle.Cut
				}
			case errors.As(err, &ee):
				// An event that does not parse in a stream that goes on:
				// skipped and counted, up to the limit.
				malformed++
				if malformed <= x.rt.cfg.Policy.MalformedLimit() {
					x.s.emit(events.Event{Time: time.Now(), Kind: events.StreamMalformed, RequestID: x.id, Route: x.req.Model,
						Target: x.lastTarget, Attempt: d.Try, Stream: true, Value: float64(malformed), Reason: "unparseable event after token " + strconv.Itoa(tokens) + " skipped"})
					continue
				}
				obs.End = lifecycle.Malformed
			case context.Cause(ctx) == nil:
				obs.End = lifecycle.Cut
			default:
				obs.End, obs.Timeout = transportEnd(parent, ctx, err)
			}
			break
		}
		switch ev.Type {
		case llm.EventStart:
			upID, upStart, x.upModel = ev.ID, ev.Usage, ev.Model
			continue
		case llm.EventTextDelta, llm.EventToolCallDelta:
			now := time.Now()
			w.token(now)
			tokens++
			if cont != nil {
				if !cont.forward(x, d, emit, &ev) {
					obs.End, obs.Diverged, ended = lifecycle.Answered, true, true
				}
				break
			}
			begin()
			x.lc.Commit(ev.Type == llm.EventToolCallDelta)
			x.sentTokens++
			x.servedBy = x.lastTarget
			if ev.Type == llm.EventTextDelta {
				x.partial.WriteString(ev.Text)
			} else if ev.ToolCall != nil {
				if ev.ToolCall.ID != "" {
					tc := *ev.ToolCall
					tc.ID = inbound.ToolCallID(x.in.Format(), tc.ID)
					ev.ToolCall = &tc
				}
				x.tools = accumulateTool(x.tools, ev.ToolCall)
			}
			if !emit(ev) {
				obs.End, ended = lifecycle.ClientGone, true
			}
		case llm.EventFinish:
			if cont != nil && !cont.check(x, d, emit, cont.v.End) {
				obs.End, obs.Diverged, ended = lifecycle.Answered, true, true
				break
			}
			finish = ev.FinishReason
			finished = true
			begin()
			x.lc.Commit(false)
			w.finish()
			if !emit(ev) {
				obs.End, ended = lifecycle.ClientGone, true
			}
		case llm.EventUsage:
			if ev.Usage != nil {
				billed := *ev.Usage
				usage = &billed
				if x.wantUsage() && x.committed {
					u := billed
					if continuing {
						// The client is owed the usage of the answer it got:
						// the output it received, and its own prompt (a
						// prefill bills what was sent as input too).
						u.OutputTokens = x.sentTokens
						if d.Prefill {
							u.InputTokens = max(0, u.InputTokens-cont.before)
						}
					}
					emit(llm.StreamEvent{Type: llm.EventUsage, Usage: &u})
				}
			}
			continue
		case llm.EventError:
			obs.End, obs.Err, ended = lifecycle.ErrorEvent, ev.Err, true
		}
		if ended {
			break
		}
	}
	obs.TTFT = w.ttft()
	obs.Tokens = tokens
	obs.PromptTokens = x.promptTokens
	if usage != nil {
		obs.Usage, obs.HaveUsage = *usage, true
	}
	outcome := lifecycle.Classify(&obs)
	if outcome.Class == policy.OK {
		if !x.committed {
			// A clean, empty answer: still an answer.
			begin()
			if finish != "" {
				emit(llm.StreamEvent{Type: llm.EventFinish, FinishReason: finish})
			}
		}
		if x.servedBy == "" || cont != nil {
			x.servedBy = x.lastTarget
		}
		x.finish = finish
		x.usage = outcome.Usage
		if x.rt.cacheable[x.req.Model] && !continuing {
			x.resp = &llm.Response{ID: x.respID, Model: x.model, Content: x.partial.String(), ToolCalls: x.tools,
				FinishReason: finish, Usage: outcome.Usage}
		}
		return outcome
	}
	return outcome
}

// lazyFlush reads an upstream body and flushes what was written to the
// client (pending) before each read, the one place a stream can wait.
type lazyFlush struct {
	r       io.Reader
	flush   func()
	pending bool
}

func (l *lazyFlush) Read(p []byte) (int, error) {
	l.now()
	return l.r.Read(p)
}

// now flushes what is pending.
func (l *lazyFlush) now() {
	if l.pending {
		l.pending = false
		l.flush()
	}
}

func accumulateTool(tcs []llm.ToolCall, d *llm.ToolCallDelta) []llm.ToolCall {
	if d.Index < 0 || d.Index > 1024 {
		return tcs
	}
	for len(tcs) <= d.Index {
		tcs = append(tcs, llm.ToolCall{})
	}
	tc := &tcs[d.Index]
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Name != "" {
		tc.Name = d.Name
	}
	tc.Arguments += d.Arguments
	return tcs
}

// detect feeds a complete upstream answer (served, or rejected as invalid
// output; resp for a non-streamed one) to the silent-degradation detectors; a
// signal becomes a detector.signal event and demotes (or trips) the target.
func (x *exchange) detect(now time.Time, t *policy.Target, resp *llm.Response) {
	det := x.rt.detectors
	if det == nil || t == nil {
		return
	}
	var o evals.Observation
	if x.req.Stream {
		o = evals.ObserveStream(x.partial.String(), x.tools, x.finish, x.usage, 0, x.structured, x.rt.refusals)
	} else {
		o = evals.Observe(resp, x.structured, x.rt.refusals)
	}
	o.Target, o.Route, o.MaxTokens = t.Key(), x.req.Model, x.req.MaxTokens
	if o.InputTokens == 0 {
		o.InputTokens = x.promptTokens
	}
	for _, sig := range det.Observe(now, o) {
		ev := sig.Event()
		ev.RequestID, ev.Route = x.id, x.req.Model
		x.s.emit(ev)
		if x.rt.action != "" {
			_ = x.rt.engine.Signal(now, sig.Target, sig.Detector, x.rt.action)
		}
	}
}
