package mockprovider

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

// proxy forwards requests to a real upstream and applies the provider's
// faults to its answers.
//
// Terminal faults (errors, resets, holds, shedding) are answered without
// calling the upstream. A request no fault selects is passed through as it
// comes, streams flushed chunk by chunk. A stream whose faults all act by
// token index or time (cut, stall and malformed_chunk with an explicit
// after/at, truncate with at, missing_done, ttft add, slow_headers,
// token_rate without jitter) is relayed live, event by event. Other
// requests a non-terminal fault selects are buffered: the upstream's answer (a stream decoded event by
// event, each event one token, timed by its arrival) becomes a plan, the
// faults transform it, and it is executed like a mock plan, so tokens whose
// time has passed leave at once and delays added by faults are honoured.
// Upstream errors are passed through.
type proxy struct {
	target *url.URL
	client *http.Client
}

func newProxy(target string, c *http.Client) (*proxy, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy_to: must be an http(s) URL, got %q", target)
	}
	if c == nil {
		c = &http.Client{}
	}
	return &proxy{target: u, client: c}, nil
}

// hopHeaders are not forwarded.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Content-Length": true,
	"Accept-Encoding": true, "Host": true,
}

func (px *proxy) serve(s *Server, w http.ResponseWriter, r *http.Request, start time.Time, req *llm.Request, body []byte, meta Meta) {
	m := s.model
	p, sel := m.PlanProxy(start, req, meta)
	if p.Terminal() {
		x := &execution{s: s, w: w, r: r, start: start, plan: p, req: req}
		o, sent := x.run()
		m.FinishSent(s.now(), p, o, sent)
		return
	}
	u := *px.target
	u.Path = strings.TrimSuffix(u.Path, "/") + r.URL.Path
	u.RawQuery = r.URL.RawQuery
	up, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		s.writeError(w, &llm.Error{Status: 502, Type: llm.ErrServer, Message: "mock proxy: " + err.Error()})
		m.FinishSent(s.now(), p, OutcomeError, 0)
		return
	}
	for k, v := range r.Header {
		if !hopHeaders[k] {
			up.Header[k] = v
		}
	}
	resp, err := px.client.Do(up)
	if err != nil {
		if r.Context().Err() != nil {
			m.FinishSent(s.now(), p, OutcomeClientGone, 0)
			return
		}
		p.Status = 502
		s.writeError(w, &llm.Error{Status: 502, Type: llm.ErrServer, Message: "mock proxy: upstream unreachable"})
		m.FinishSent(s.now(), p, OutcomeError, 0)
		return
	}
	defer resp.Body.Close()
	if len(sel) == 0 || resp.StatusCode < 200 || resp.StatusCode > 299 {
		p.Status = resp.StatusCode
		o, sent := passThrough(w, resp)
		m.FinishSent(s.now(), p, o, sent)
		return
	}
	if p.Stream {
		if lv, ok := liveSteps(p, sel); ok {
			m.ApplyFaults(p, req, meta, sel) // journal the faults; the plan has no tokens
			x := &execution{s: s, w: w, r: r, start: start, plan: p, req: req}
			o, sent := lv.run(x, resp)
			m.FinishSent(s.now(), p, o, sent)
			x.end(o)
			return
		}
	}
	// A fresh plan: the steps recorded on p by the first application
	// would otherwise apply twice.
	q := faults.NewPlan()
	q.Seq, q.Stream = p.Seq, p.Stream
	if err := px.buffer(s, q, resp, start, q.Stream); err != nil {
		p.Status = 502
		s.writeError(w, &llm.Error{Status: 502, Type: llm.ErrServer, Message: "mock proxy: " + err.Error()})
		m.FinishSent(s.now(), p, OutcomeError, 0)
		return
	}
	m.ApplyFaults(q, req, meta, sel)
	x := &execution{s: s, w: w, r: r, start: start, plan: q, req: req}
	o, sent := x.run()
	m.FinishSent(s.now(), q, o, sent)
	x.end(o)
}

// live are the fault steps a proxy applies to an upstream stream as it
// flows, by token index, without buffering it.
type live struct {
	delay       time.Duration // added to each token's arrival (ttft add, slow_headers)
	headerDelay time.Duration
	gap         time.Duration // minimum gap between tokens (token_rate)
	truncAt     int           // -1 none
	cutAfter    int
	stallAfter  int
	stallFor    time.Duration
	stallClose  bool
	malformedAt int
	noDone      bool
}

// liveSteps reports whether every selected fault can be applied to a stream
// as it flows: stream-shape and timing faults whose token index is explicit
// (the default "half of the tokens" needs the whole answer), ttft in add
// mode, truncate with at. Content faults need the whole answer.
func liveSteps(p *Plan, sel []*faults.Active) (live, bool) {
	lv := live{delay: p.TTFT, headerDelay: p.HeaderDelay, truncAt: -1, cutAfter: p.CutAfter,
		stallAfter: p.StallAfter, stallFor: p.StallFor, stallClose: p.StallClose, malformedAt: p.MalformedAt, noDone: p.NoDone}
	for _, a := range sel {
		s := a.Spec
		switch s.Kind {
		case faults.KindSlowHeaders, faults.KindMissingDone:
		case faults.KindTTFT:
			if s.Mode == "set" {
				return lv, false
			}
		case faults.KindTokenRate:
			if s.Jitter != 0 {
				return lv, false
			}
			lv.gap = time.Duration(float64(time.Second) / s.Rate)
		case faults.KindCut, faults.KindStall:
			if s.After == nil {
				return lv, false
			}
		case faults.KindMalformedChunk:
			if s.At == nil {
				return lv, false
			}
		case faults.KindTruncate:
			if s.At == nil {
				return lv, false
			}
			lv.truncAt = *s.At
		default:
			return lv, false
		}
	}
	return lv, true
}

// run relays the upstream stream, applying the steps.
func (lv live) run(x *execution, resp *http.Response) (Outcome, int) {
	if !x.wait(lv.headerDelay) {
		return OutcomeClientGone, 0
	}
	f := x.s.model.Format()
	h := x.w.Header()
	for k, v := range resp.Header {
		if !hopHeaders[k] {
			h[k] = v
		}
	}
	x.w.WriteHeader(resp.StatusCode)
	x.headers = true
	enc := x.s.codec.NewStreamEncoder(x.w)
	// The upstream is read on its own goroutine so that each event's arrival
	// is timed when it arrives, not when the relay gets to it.
	type item struct {
		ev  llm.StreamEvent
		at  time.Duration
		err error
	}
	events := make(chan item, 256)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(events)
		dec := x.s.codec.NewStreamDecoder(resp.Body)
		for {
			ev, err := dec.Next()
			select {
			case events <- item{ev, x.s.now().Sub(x.start), err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var (
		i, truncated int
		last         time.Duration
		finish       llm.FinishReason
		usage        *llm.Usage
	)
	for {
		var it item
		var ok bool
		select {
		case it, ok = <-events:
		default:
			x.flush() // about to wait for the upstream: send what is due
			select {
			case it, ok = <-events:
			case <-x.r.Context().Done():
				return OutcomeClientGone, x.sent
			}
		}
		if !ok || errors.Is(it.err, io.EOF) {
			break
		}
		if it.err != nil {
			return OutcomeCut, x.sent // the upstream broke: so does the client's stream
		}
		ev := it.ev
		switch ev.Type {
		case llm.EventTextDelta, llm.EventToolCallDelta:
			if lv.truncAt >= 0 && i >= lv.truncAt {
				truncated++
				continue
			}
			if i == lv.cutAfter {
				return OutcomeCut, x.sent
			}
			if lv.stallClose && i == lv.stallAfter {
				if !x.wait(last + lv.stallFor) {
					return OutcomeClientGone, x.sent
				}
				return OutcomeCut, x.sent
			}
			due := it.at + lv.delay
			if lv.stallAfter >= 0 && !lv.stallClose && i >= lv.stallAfter {
				due += lv.stallFor
			}
			if lv.gap > 0 && i > 0 {
				due = max(due, last+lv.gap)
			}
			if !x.wait(due) {
				return OutcomeClientGone, x.sent
			}
			last = due
			if i == lv.malformedAt {
				_, _ = io.WriteString(x.w, malformedEvent(f))
			} else if enc.Encode(ev) != nil {
				return OutcomeClientGone, x.sent
			}
			i++
			x.sent++
		case llm.EventFinish:
			finish = ev.FinishReason
		case llm.EventUsage:
			usage = ev.Usage
		default: // start and in-band errors pass as they are
			if enc.Encode(ev) != nil {
				return OutcomeClientGone, x.sent
			}
		}
	}
	if i == lv.cutAfter {
		return OutcomeCut, x.sent
	}
	if truncated > 0 {
		finish = llm.FinishLength
		if usage != nil {
			u := *usage
			u.OutputTokens = lv.truncAt
			usage = &u
		}
		x.plan.Corrupted = true
	}
	if finish == "" {
		return OutcomeCut, x.sent // the upstream ended without a finish
	}
	x.plan.Response.FinishReason = finish
	if enc.Encode(llm.StreamEvent{Type: llm.EventFinish, FinishReason: finish}) != nil {
		return OutcomeClientGone, x.sent
	}
	if usage != nil && enc.Encode(llm.StreamEvent{Type: llm.EventUsage, Usage: usage}) != nil {
		return OutcomeClientGone, x.sent
	}
	o := OutcomeOK
	switch {
	case lv.malformedAt >= 0 && lv.malformedAt < i:
		o = OutcomeMalformed
	case lv.noDone:
		return OutcomeNoDone, x.sent
	}
	if enc.Close() != nil {
		return OutcomeClientGone, x.sent
	}
	return o, x.sent
}

// passThrough copies the upstream response, flushing after every read.
func passThrough(w http.ResponseWriter, resp *http.Response) (Outcome, int) {
	for k, v := range resp.Header {
		if !hopHeaders[k] {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return OutcomeClientGone, 0
			}
			if f != nil {
				f.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return OutcomeCut, 0
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return OutcomeError, 0
	}
	return OutcomeOK, 0
}

// buffer reads the upstream's whole answer into p: content, tool calls,
// finish reason, usage, and (for streams) one token per delta event, timed
// by its arrival.
func (px *proxy) buffer(s *Server, p *Plan, resp *http.Response, start time.Time, stream bool) error {
	if !stream {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("reading the upstream answer: %w", err)
		}
		out, err := s.codec.DecodeResponse(b)
		if err != nil {
			return fmt.Errorf("decoding the upstream answer: %w", err)
		}
		usage := out.Usage
		p.Response = *out
		p.SetContent(out.Content)
		p.Response.Usage = usage
		at := s.now().Sub(start)
		p.TTFT = at
		for i := range p.TokenTimes {
			p.TokenTimes[i] = at
		}
		return nil
	}
	dec := s.codec.NewStreamDecoder(resp.Body)
	var text strings.Builder
	var calls []llm.ToolCall
	// Chunks may be shared (see faults.Plan): appends start a new array.
	p.Chunks, p.TokenTimes, p.ToolStart = nil, p.TokenTimes[:0], p.ToolStart[:0]
	for {
		ev, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the upstream stream: %w", err)
		}
		at := s.now().Sub(start)
		switch ev.Type {
		case llm.EventStart:
			p.Response.ID, p.Response.Model = ev.ID, ev.Model
		case llm.EventTextDelta:
			if len(calls) > 0 {
				continue // text after a tool call is not representable in a plan
			}
			text.WriteString(ev.Text)
			p.Chunks = append(p.Chunks, ev.Text)
			p.TokenTimes = append(p.TokenTimes, at)
		case llm.EventToolCallDelta:
			d := ev.ToolCall
			if d == nil {
				continue
			}
			if len(calls) == 0 || d.Index != len(calls)-1 {
				calls = append(calls, llm.ToolCall{ID: d.ID, Name: d.Name})
				p.ToolStart = append(p.ToolStart, len(p.Chunks))
			}
			calls[len(calls)-1].Arguments += d.Arguments
			p.Chunks = append(p.Chunks, d.Arguments)
			p.TokenTimes = append(p.TokenTimes, at)
		case llm.EventFinish:
			p.Response.FinishReason = ev.FinishReason
		case llm.EventUsage:
			if ev.Usage != nil {
				p.Response.Usage = *ev.Usage
			}
		case llm.EventError:
			if ev.Err != nil {
				p.SetError(ev.Err)
				return nil
			}
		}
	}
	p.Response.Content = text.String()
	p.Response.ToolCalls = calls
	if len(p.TokenTimes) > 0 {
		p.TTFT = p.TokenTimes[0]
	}
	if p.Response.FinishReason == "" {
		p.Response.FinishReason = llm.FinishStop
	}
	return nil
}
