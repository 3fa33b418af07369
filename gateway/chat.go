package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/inbound"
	"github.com/brownout-dev/brownout/llm/responses"
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

	// at is the attempt in progress (lc.Attempt): the request sent, and
	// what of its answer reaches the client.
	at *lifecycle.Attempt

	// Stream state. The answer that reached the client is lc's (Partial,
	// Tools, Sent, ServedBy).
	committed  bool // the response headers were written
	enc        llm.StreamEncoder
	finish     llm.FinishReason
	usage      llm.Usage
	structured bool
	respID     string
	model      string // the model that served
	// hdr backs the one-value headers of the answer (setHeader; hdr*
	// indices), and evUsage the usage of the events the relay writes (its
	// start, its usage), so that they cost no allocation of their own:
	// the exchange lives as long as the response.
	hdr     [hdrCount]string
	evUsage [2]llm.Usage

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
	client     string     // the client's ID (clients:), "" when open
	adm        *admission // the client's admission, nil when open
	// held is what the request's upstream answers hold of the byte budget
	// (limits.max_inflight_bytes), given back when it ends.
	held     int64
	reserved int // attempts the reservation covers

	// bestEffort: the client lets fields a target cannot honour be dropped;
	// dropped names them, by target key (see unhonoured.go).
	bestEffort bool
	dropped    map[string]string
	// keepAnswer: the answer's conversation is kept for a later
	// previous_response_id (see conversations.go).
	keepAnswer bool

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
	keeps := in.Format() == responses.Format && s.rt.Load().cfg.Responses.StoreTTL.D() > 0
	req, st, err := decodeRequest(in, body, keeps)
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
	adm := admissionOf(r.Context())
	if adm != nil && adm.maxTokens > 0 && (req.MaxTokens <= 0 || req.MaxTokens > adm.maxTokens) {
		req.MaxTokens = adm.maxTokens // what the client's reservation covers
	}

	if st.Previous != "" {
		if err := s.continueConversation(time.Now(), clientOf(r.Context()), req, st.Previous); err != nil {
			writeLLMError(w, in, asLLMError(err))
			return
		}
	}

	if key := r.Header.Get("Idempotency-Key"); key != "" {
		s.serveIdempotent(w, r, in, req, key, body, id)
		return
	}
	x := s.newExchange(w, in, req, id)
	x.admitted(adm)
	x.bestEffort = bestEffort(r.Header)
	x.keepAnswer = keeps && !st.NoStore
	defer x.releaseMemory()
	x.run(r.Context(), r.Header.Get(HeaderHint))
}

func (s *Server) newExchange(w http.ResponseWriter, in llm.Codec, req *llm.Request, id string) *exchange {
	return &exchange{s: s, rt: s.rt.Load(), w: w, rc: http.NewResponseController(w), in: in, req: req, id: id, start: time.Now()}
}

func readBody(r *http.Request) ([]byte, error) {
	if p, ok := r.Body.(*preread); ok { // read by the trust boundary (guard)
		b := p.b
		p.b = nil // the caller's once decoded: not held by r for the whole request
		return b, nil
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
	x.promptTokens = lifecycle.EstimatePromptTokens(x.req)
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
	x.keep()
	x.writeAnswer(e.target, 0, "cache")
	return true
}

// begin starts the request's attempt in the decision core.
//
//go:noinline
func (x *exchange) begin(hint string) {
	x.structured = lifecycle.Structured(x.rt.routeCfg(x.req.Model), x.req.ResponseFormat)
	x.lc.Begin(x.rt.engine, time.Now(), policy.Request{
		ID: x.id, Route: x.req.Model, PromptTokens: x.promptTokens,
		Stream: x.req.Stream, Structured: x.structured, Tools: len(x.req.Tools) > 0, Hint: hint,
		Client: x.client,
	})
}

// hold counts n bytes of upstream answer the request holds against the
// gateway's byte budget: they are not refused (the request was admitted),
// but new requests are while answers fill the budget.
func (x *exchange) hold(n int) {
	if n > 0 {
		x.held += int64(n)
		x.s.mem.used.Add(int64(n))
	}
}

// releaseMemory gives back what hold counted.
func (x *exchange) releaseMemory() {
	if x.held > 0 {
		x.s.mem.give(x.held)
		x.held = 0
	}
}

// admitted records the client that made the request and its reservation.
func (x *exchange) admitted(a *admission) {
	if a != nil {
		x.client, x.adm, x.reserved = a.id, a, 1
	}
}

// reserve reserves the worst case of one more attempt beyond the first
// (clients.Reservation.Extend); the error is the client's when its budget
// cannot cover it.
func (x *exchange) reserve(ctx context.Context) *llm.Error {
	if x.adm == nil || x.lc.Attempts() <= x.reserved {
		return nil
	}
	if d := x.adm.res.Extend(time.Now()); d.Verdict != clients.Allow {
		return admissionError(d)
	}
	if d := x.s.reserveInFleet(ctx, x.adm.acct, x.adm.res, x.adm.dollars); d != nil {
		return admissionError(*d) // what Extend took locally is given back at the end
	}
	x.reserved++
	return nil
}

// attempt carries out a Send decision and reports its outcome.
//
//go:noinline
func (x *exchange) attempt(ctx context.Context, d *policy.Decision) {
	if e := x.reserve(ctx); e != nil {
		// Not sent: the budget cannot cover another attempt's worst case.
		x.lc.Observe(time.Now(), policy.Outcome{Class: policy.Skipped, Err: e})
		return
	}
	key := d.Target.Key()
	if x.lastTarget != "" && x.lastTarget != key {
		x.s.m.fallbacks.WithLabelValues(x.req.Model, x.lastTarget, key).Inc()
	}
	x.lastTarget = key
	x.at = x.lc.Attempt(d, key, x.req)
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
		x.streamError(asGatewayError(d.InBand))
		return
	}
	writeLLMError(x.w, x.in, asGatewayError(d.Err))
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
		x.traceServed(cmp.Or(x.lc.ServedBy(), target), d.Tier, x.lc.Attempts())
	}
	if x.req.Stream && x.committed {
		if by := x.lc.ServedBy(); by != "" {
			// The trailer: the value setServed keeps, replaced in place
			// (an assignment to the header map, of eight keys by now,
			// would grow it to a table, even for a key it has).
			x.hdr[hdrTarget] = by
		}
		x.keep()
		// The end marker is not flushed on its own: net/http writes it
		// with the chunked terminator and the trailer when the handler
		// returns (one write, one read for the client, not two), which is
		// a few microseconds from here; nothing after this waits.
		_ = x.enc.Close()
		if put {
			x.s.cache.put(time.Now(), x.req.Model, target, x.hash, x.resp)
		}
		return
	}
	if put {
		x.s.cache.put(time.Now(), x.req.Model, target, x.hash, x.resp)
	}
	x.keep()
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
	x.setServed(h, target, attempts, tier)
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

// The one-value headers whose value x.hdr holds (setServed, commitStream).
const (
	hdrTarget = iota
	hdrAttempts
	hdrTier
	hdrContentType
	hdrCacheControl
	hdrAccel
	hdrTrailer
	hdrCount
)

// setHeader sets header k of h to the one value v, kept in x.hdr[i].
func (x *exchange) setHeader(h http.Header, i int, k, v string) {
	x.hdr[i] = v
	h[k] = x.hdr[i : i+1 : i+1]
}

// setServed sets the headers naming what served the answer: the target
// (whose value a stream's trailer replaces, see done), the parameters it
// dropped, the attempts and the tier.
func (x *exchange) setServed(h http.Header, target string, attempts int, tier string) {
	x.setHeader(h, hdrTarget, HeaderTarget, target)
	x.setDropped(h, target)
	x.setHeader(h, hdrAttempts, HeaderAttempts, strconv.Itoa(attempts))
	x.setHeader(h, hdrTier, HeaderTier, tier)
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
	x.setHeader(h, hdrContentType, "Content-Type", "text/event-stream")
	x.setHeader(h, hdrCacheControl, "Cache-Control", "no-cache")
	x.setHeader(h, hdrAccel, "X-Accel-Buffering", "no")
	// The target that produced the end of the answer, once known: another
	// one when a fall-back continued it.
	x.setHeader(h, hdrTrailer, "Trailer", HeaderTarget)
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
		o = evals.ObserveStream(x.lc.Partial(), x.lc.Tools(), x.finish, x.usage, 0, x.structured, x.rt.refusals)
	} else {
		o = evals.Observe(resp, x.structured, x.rt.refusals)
	}
	o.Of(t.Key(), x.req.Model, x.req.MaxTokens, x.promptTokens)
	for _, sig := range det.Observe(now, o) {
		ev := sig.Event()
		ev.RequestID, ev.Route = x.id, x.req.Model
		x.s.emit(ev)
		if x.rt.action != "" {
			_ = x.rt.engine.Signal(now, sig.Target, sig.Detector, x.rt.action)
		}
	}
}
