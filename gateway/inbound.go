package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/llm"
)

// The trust boundary in front of the inference endpoints: concurrency
// limits, client keys, body limits and client admission, in that order, all
// before the request is decoded or reaches the decision core. Each refusal
// is an error in the inbound API's own shape (a 503 or 429 with
// Retry-After), counted in brownout_inbound_rejected_total by a bounded
// client label and reason.

// inboundLimits are the process-wide in-flight counters.
type inboundLimits struct {
	requests atomic.Int64
	streams  atomic.Int64
}

// clientKey is the context key of the request's admission.
type clientKey struct{}

// admission is what the trust boundary admitted a request with.
type admission struct {
	id   string               // the client's ID
	acct *clients.Account     // the client's account
	res  *clients.Reservation // what the request reserved
	// dollars is one attempt's worst-case cost (clients.Ask.Dollars).
	dollars float64
	// maxTokens caps the request's output: the most output the reservation
	// covers (0: no cap, the client has no budget or tokens limit).
	maxTokens int
}

// clientOf returns the ID of the client that made r ("" in an open gateway).
func clientOf(ctx context.Context) string {
	if a := admissionOf(ctx); a != nil {
		return a.id
	}
	return ""
}

// admissionOf returns the request's admission (nil in an open gateway).
func admissionOf(ctx context.Context) *admission {
	a, _ := ctx.Value(clientKey{}).(*admission)
	return a
}

// preread is a request body the boundary already read (readBody returns
// it as is).
type preread struct {
	b []byte
}

func (p *preread) Read([]byte) (int, error) { return 0, io.EOF }
func (p *preread) Close() error             { return nil }

// Reasons an inbound request is refused (the reason label).
const (
	rejOverloaded   = "overloaded"
	rejStreams      = "streams"
	rejUnauthorized = "unauthorized"
	rejTooLarge     = "too_large"
	rejTimeout      = "body_timeout"
	rejMessages     = "too_many_messages"
	rejDecoded      = "decoded_too_large"
	rejStateDown    = "state_unavailable"
	rejMemory       = "memory"
)

// guard serves an inference endpoint behind the trust boundary.
func (s *Server) guard(in llm.Codec) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rt := s.rt.Load()
		lim := &rt.cfg.Limits
		label := clientAnonymous
		refuse := func(reason string, e *llm.Error) {
			s.m.rejected(label, reason)
			writeLLMError(w, in, e)
		}
		if n := s.in.requests.Add(1); n > int64(lim.maxConcurrentRequests()) {
			s.in.requests.Add(-1)
			refuse(rejOverloaded, &llm.Error{Status: 503, Type: llm.ErrOverloaded, RetryAfter: time.Second,
				Message: "the gateway is at its limit of concurrent requests; retry shortly"})
			return
		}
		defer s.in.requests.Add(-1)
		if s.refuseWithoutStore() {
			refuse(rejStateDown, stateUnavailable())
			return
		}

		var acct *clients.Account
		if rt.clients.Len() > 0 {
			var ok bool
			if acct, ok = rt.clients.Lookup(presentedKey(r, in.Format())); !ok {
				label = clientUnknown
				w.Header().Set("WWW-Authenticate", `Bearer realm="brownout"`)
				refuse(rejUnauthorized, &llm.Error{Status: 401, Type: llm.ErrAuthentication,
					Message: "a valid client key is required (Authorization: Bearer KEY, x-api-key: KEY or x-goog-api-key: KEY)"})
				return
			}
			label = acct.ID()
		}

		// The byte budget, before a byte of the body is read: what a body of
		// the announced length (or the largest) would take, adjusted once
		// the body is scanned.
		memMax := rt.inflightBytes
		held := r.ContentLength
		if held <= 0 || held > lim.maxBodyBytes() {
			held = lim.maxBodyBytes()
		}
		held = requestBytes(held, held*decodedPerByte, false)
		if !s.mem.take(held, memMax) {
			refuse(rejMemory, memoryError())
			return
		}
		defer func() { s.mem.give(held) }()

		body, e := readLimited(w, r, lim)
		if e != nil {
			reason := rejTooLarge
			if e.Status == http.StatusRequestTimeout {
				reason = rejTimeout
				w.Header().Set("Connection", "close")
			}
			refuse(reason, e)
			return
		}
		sh := scanRequest(body)
		if max := lim.maxMessages(); sh.messages > max {
			refuse(rejMessages, llm.BadRequest("messages", "a request may carry at most %d messages (limits.max_messages; got %d)", max, sh.messages))
			return
		}
		if max := lim.maxDecodedBytes(); sh.decoded(len(body)) > max {
			refuse(rejDecoded, &llm.Error{Status: 413, Type: llm.ErrInvalidRequest,
				Message: "the request is too large once decoded (limits.max_decoded_bytes): too many messages, parts or tools"})
			return
		}
		if need := requestBytes(int64(len(body)), sh.decoded(len(body)), sh.stream); need > held {
			if !s.mem.take(need-held, memMax) {
				refuse(rejMemory, memoryError())
				return
			}
			held = need
		} else {
			s.mem.give(held - need)
			held = need
		}
		if sh.stream {
			n := s.in.streams.Add(1)
			defer s.in.streams.Add(-1)
			if n > int64(lim.maxConcurrentStreams()) {
				refuse(rejStreams, &llm.Error{Status: 503, Type: llm.ErrOverloaded, RetryAfter: time.Second,
					Message: "the gateway is at its limit of concurrent streams; retry shortly"})
				return
			}
		}
		if acct != nil {
			route := sh.model
			if m, _, err := routeFromPath(in, r.URL.Path); err == nil && m != "" {
				route = m // Gemini names the route in the path
			}
			ask, maxTokens := rt.worstCase(acct, route, len(body), sh.maxTokens)
			dollars := ask.Dollars
			d, res := acct.Admit(time.Now(), ask)
			if d.Verdict != clients.Allow {
				refuse(d.Verdict.String(), admissionError(d))
				return
			}
			defer func() { res.Release(time.Now()) }()
			if fd := s.reserveInFleet(r.Context(), acct, res, ask.Dollars); fd != nil {
				refuse(fd.Verdict.String(), admissionError(*fd))
				return
			}
			if fd := s.drawTokensInFleet(r.Context(), acct, res, ask.Tokens); fd != nil {
				refuse(fd.Verdict.String(), admissionError(*fd))
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), clientKey{}, &admission{id: acct.ID(), acct: acct, res: res, maxTokens: maxTokens, dollars: dollars}))
		}
		s.m.rejected(label, "") // admitted
		r.Body = &preread{b: body}
		r.ContentLength = int64(len(body))
		s.serveChat(w, r, in)
	}
}

// memoryError is the error of a request refused by the byte budget.
func memoryError() *llm.Error {
	return &llm.Error{Status: 503, Type: llm.ErrOverloaded, RetryAfter: time.Second,
		Message: "the gateway is at its limit of request memory in flight (limits.max_inflight_bytes); retry shortly"}
}

// admissionError is the client-facing error of a refused admission.
func admissionError(d clients.Decision) *llm.Error {
	switch d.Verdict {
	case clients.Forbidden:
		return &llm.Error{Status: 403, Type: llm.ErrPermission, Param: "model",
			Message: "this client key may not use this route"}
	case clients.OverBudget:
		msg := "this client's spend budget for the period is used up"
		if d.RetryAfter <= time.Second {
			// Refused for what requests in flight reserved, not for what
			// was spent: some of it comes back as they end.
			msg = "this client's spend budget is reserved by its requests in flight (each reserves its worst-case cost); retry shortly"
		}
		return &llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: "budget_exhausted", RetryAfter: d.RetryAfter, Message: msg}
	default:
		return &llm.Error{Status: 429, Type: llm.ErrRateLimit, Code: d.Limit, RetryAfter: d.RetryAfter,
			Message: "this client's " + strings.ReplaceAll(d.Limit, "_", " ") + " limit is reached"}
	}
}

// presentedKey is the key a request carries, as each API's SDKs present
// it: "Authorization: Bearer KEY" (OpenAI), "x-api-key: KEY" (Anthropic),
// "x-goog-api-key: KEY" or, on the Gemini API only, "?key=KEY" (Gemini).
// A key in the query is removed from r's URL, so that nothing downstream
// can log, trace or forward it.
func presentedKey(r *http.Request, f llm.Format) string {
	var key string
	if f == llm.FormatGemini && r.URL.RawQuery != "" {
		q := r.URL.Query()
		if q.Has("key") {
			key = q.Get("key")
			q.Del("key")
			r.URL.RawQuery = q.Encode()
			r.RequestURI = ""
		}
	}
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(k)
	}
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	return key
}

// worstCase is what a request of bodyLen bytes naming maxTokens output
// tokens (0: none) reserves from acct on route: its prompt estimate plus
// its output cap in tokens, and in dollars one attempt of those at the
// costliest prices among the route's targets. maxTokens is the output cap
// the gateway imposes on the request so that its attempts stay within the
// reservation (0 when acct has nothing to reserve against).
func (rt *runtime) worstCase(acct *clients.Account, route string, bodyLen, maxTokens int) (clients.Ask, int) {
	ask := clients.Ask{Route: route, Tokens: bodyLen/4 + 1}
	if !acct.Reserves() {
		return ask, 0
	}
	if maxTokens <= 0 {
		maxTokens = rt.cfg.Limits.reserveOutputTokens()
	}
	ask.Tokens += maxTokens
	var in, out float64
	if rc := rt.routeCfg(route); rc != nil {
		for i := range rc.Targets {
			p := rc.Targets[i].Price
			in, out = max(in, p.InputPerMTok, p.CachedInputPerMTok), max(out, p.OutputPerMTok)
		}
	}
	ask.Dollars = (float64(bodyLen/4+1)*in + float64(maxTokens)*out) / 1e6
	return ask, maxTokens
}

// readLimited reads a request body of at most limits.max_body_bytes within
// limits.read_body_timeout; the error is the client's 413 or 408.
func readLimited(w http.ResponseWriter, r *http.Request, lim *LimitsConfig) ([]byte, *llm.Error) {
	maxBytes := lim.maxBodyBytes()
	tooLarge := &llm.Error{Status: 413, Type: llm.ErrInvalidRequest,
		Message: "the request body is larger than limits.max_body_bytes"}
	if r.ContentLength > maxBytes {
		return nil, tooLarge
	}
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(lim.readBodyTimeout())
	if rc.SetReadDeadline(deadline) == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	n := r.ContentLength
	if n <= 0 {
		n = 4096
	}
	buf := make([]byte, 0, min(n, maxBytes)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > maxBytes {
			return nil, tooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || time.Now().After(deadline) {
				return nil, &llm.Error{Status: 408, Type: llm.ErrTimeout,
					Message: "the request body did not arrive within limits.read_body_timeout"}
			}
			return nil, &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Message: "reading the request body: " + err.Error()}
		}
	}
}

// Metric labels for requests without a configured client.
const (
	clientAnonymous = "anonymous" // an open gateway
	clientUnknown   = "unknown"   // no key, or a key no client has
)

// metricsAuth protects /metrics with the admin token when
// admin.protect_metrics is set.
func (s *Server) metricsAuth(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rt := s.rt.Load()
		if rt.cfg.Admin.ProtectMetrics && rt.adminToken != nil && !bearerIs(r, rt.adminToken) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brownout metrics"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "admin token required"})
			return
		}
		h.ServeHTTP(w, r)
	}
}
