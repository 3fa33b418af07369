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

	"github.com/brownout-dev/brownout/llm"
)

// proxy forwards requests to a real upstream and applies the provider's
// faults to its answers.
//
// Terminal faults (errors, resets, holds, shedding) are answered without
// calling the upstream. A request no fault selects is passed through as it
// comes, streams flushed chunk by chunk. A request a non-terminal fault
// selects is buffered: the upstream's answer (a stream decoded event by
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
	if err := px.buffer(s, p, resp, start, p.Stream); err != nil {
		p.Status = 502
		s.writeError(w, &llm.Error{Status: 502, Type: llm.ErrServer, Message: "mock proxy: " + err.Error()})
		m.FinishSent(s.now(), p, OutcomeError, 0)
		return
	}
	m.ApplyFaults(p, req, meta, sel)
	x := &execution{s: s, w: w, r: r, start: start, plan: p, req: req}
	o, sent := x.run()
	m.FinishSent(s.now(), p, o, sent)
	x.end(o)
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
	p.Chunks, p.TokenTimes, p.ToolStart = p.Chunks[:0], p.TokenTimes[:0], p.ToolStart[:0]
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
