package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
)

// alertLoop evaluates the alert rules periodically and delivers fired and
// resolved alerts to the configured sinks. Delivery outcomes are
// alert.delivered events (OK false on failure) and metrics.
type alertLoop struct {
	s *Server

	mu     sync.Mutex
	eval   *alerts.Evaluator // nil without rules
	active atomic.Bool       // eval != nil: skip the lock on the hot path otherwise
	rules  []alerts.Rule
	sinks  []AlertSink
	every  time.Duration

	queue  chan events.Event
	reset  chan time.Duration
	stop   chan struct{}
	closed sync.Once
	wg     sync.WaitGroup
	client *http.Client
}

func newAlertLoop(s *Server) *alertLoop {
	a := &alertLoop{s: s, queue: make(chan events.Event, 1024), reset: make(chan time.Duration, 1),
		stop: make(chan struct{}), every: 15 * time.Second,
		client: &http.Client{Transport: NewTransport(ProtocolAuto, TransportOptions{MaxIdleConnsPerHost: 4}), CheckRedirect: noRedirect}}
	a.wg.Add(2)
	go a.evaluateLoop()
	go a.deliverLoop()
	return a
}

// configure applies a configuration's alert section. The evaluator (and its
// windows) is kept when the rules are unchanged.
func (a *alertLoop) configure(cfg *Config) {
	rules := cfg.Alerts.InEffect()
	a.mu.Lock()
	a.eval = alerts.Reload(a.eval, a.rules, rules, lifecycle.AlertRoutes(cfg.Routes))
	a.rules = rules
	a.active.Store(a.eval != nil)
	a.sinks = cfg.Alerts.Sinks
	every := or(cfg.Alerts.EvaluateEvery.D(), 15*time.Second)
	changed := every != a.every
	a.every = every
	a.mu.Unlock()
	if changed {
		select {
		case a.reset <- every:
		default:
		}
	}
}

func (a *alertLoop) observe(ev *events.Event) {
	switch ev.Kind {
	case events.RequestStart, events.RequestEnd, events.AttemptStart, events.AttemptEnd, events.BreakerTransition:
	default:
		return
	}
	if !a.active.Load() {
		return
	}
	a.mu.Lock()
	if a.eval != nil {
		a.eval.ObserveEvent(ev)
	}
	a.mu.Unlock()
}

func (a *alertLoop) firing() []alerts.Alert {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.eval == nil {
		return []alerts.Alert{}
	}
	return a.eval.Firing()
}

// evaluate runs the rules at now and queues deliveries.
func (a *alertLoop) evaluate(now time.Time) {
	a.mu.Lock()
	var out []events.Event
	if a.eval != nil {
		out = a.eval.Evaluate(now)
	}
	a.mu.Unlock()
	for _, ev := range out {
		a.s.emit(ev)
		select {
		case a.queue <- ev:
		default:
			a.s.emit(events.Event{Time: now, Kind: events.AlertDelivered, Name: ev.Name, Sink: "*", Reason: "delivery queue full"})
		}
	}
}

func (a *alertLoop) evaluateLoop() {
	defer a.wg.Done()
	a.mu.Lock()
	t := time.NewTicker(a.every)
	a.mu.Unlock()
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case d := <-a.reset:
			t.Reset(d)
		case now := <-t.C:
			a.evaluate(now)
		}
	}
}

func (a *alertLoop) deliverLoop() {
	defer a.wg.Done()
	for {
		select {
		case <-a.stop:
			return
		case ev := <-a.queue:
			a.mu.Lock()
			sinks := a.sinks
			a.mu.Unlock()
			for i := range sinks {
				err := a.deliver(&sinks[i], ev)
				d := events.Event{Time: time.Now(), Kind: events.AlertDelivered, Name: ev.Name, Severity: ev.Severity,
					Sink: sinks[i].Name, OK: err == nil, Route: ev.Route, Target: ev.Target}
				if err != nil {
					d.Reason = err.Error()
					a.s.log.Error("alert delivery failed", "alert", ev.Name, "sink", sinks[i].Name, "err", err)
				}
				a.s.emit(d)
			}
		}
	}
}

// alertPayload is the JSON body a webhook sink receives.
type alertPayload struct {
	Status   string    `json:"status"` // firing or resolved
	Alert    string    `json:"alert"`
	Severity string    `json:"severity"`
	Route    string    `json:"route,omitempty"`
	Target   string    `json:"target,omitempty"`
	Value    float64   `json:"value"`
	Summary  string    `json:"summary"`
	Time     time.Time `json:"time"`
}

func payloadOf(ev events.Event) alertPayload {
	status := "firing"
	if ev.Kind == events.AlertResolved {
		status = "resolved"
	}
	return alertPayload{Status: status, Alert: ev.Name, Severity: ev.Severity, Route: ev.Route, Target: ev.Target,
		Value: ev.Value, Summary: ev.Reason, Time: ev.Time}
}

// deliver sends one alert to one sink, with the sink's timeout and retries.
func (a *alertLoop) deliver(sink *AlertSink, ev events.Event) error {
	p := payloadOf(ev)
	if sink.Kind == "log" {
		a.s.log.Warn("alert "+p.Status, "alert", p.Alert, "severity", p.Severity, "route", p.Route, "target", p.Target,
			"value", p.Value, "summary", p.Summary)
		return nil
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	timeout := or(sink.Timeout.D(), 5*time.Second)
	retries := or(sink.Retries, 2)
	backoff := or(sink.Backoff.D(), 500*time.Millisecond)
	for try := 0; ; try++ {
		err = a.post(sink, body, timeout)
		if err == nil || try >= retries {
			return err
		}
		select {
		case <-a.stop:
			return fmt.Errorf("shutting down: %w", err)
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

func (a *alertLoop) post(sink *AlertSink, body []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sink.URL.Value(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: invalid url", sink.Name)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "brownout-alerts")
	for k, v := range sink.Headers {
		req.Header.Set(k, v.Value())
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return scrubURL(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}

func (a *alertLoop) close() {
	a.closed.Do(func() { close(a.stop) })
	a.wg.Wait()
}

// EvaluateAlerts evaluates the alert rules at now at once (normally done
// every alerts.evaluate_every) and returns the events it fired or resolved.
// Deliveries proceed in the background.
func (s *Server) EvaluateAlerts(now time.Time) []events.Event {
	s.al.mu.Lock()
	var out []events.Event
	if s.al.eval != nil {
		out = s.al.eval.Evaluate(now)
	}
	s.al.mu.Unlock()
	for _, ev := range out {
		s.emit(ev)
		select {
		case s.al.queue <- ev:
		default:
		}
	}
	return out
}

// targetOrder lists a route's targets primary first: by tier (the route's
// tier order, else first appearance), then priority, then listing order.
