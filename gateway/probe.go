package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// ProbesConfig configures active probes: every target of every route gets a
// small synthetic request with a known-good answer every min_interval to
// max_interval (seeded jitter), sent through the target's provider client and
// checked by eval checks on the content, not just the status. Failing probes
// back off; a 429 is not a failure, and the next probe waits at least its
// Retry-After. After `failures` consecutive failures the target's breaker
// opens (so does policy.breaker.probe_failures, whichever is lower). Probes
// never close a breaker: a half-open breaker closes on real traffic only.
// They cover routes too cold for the passive signals.
type ProbesConfig struct {
	// Enabled turns probing on. Default false.
	Enabled bool `yaml:"enabled,omitempty"`
	// min_interval (default 30s), max_interval (60s), failures (3),
	// max_backoff (10m), timeout (10s): see probe.Config.
	probe.Config `yaml:",inline"`
	// Probe is the request and its checks. Default probe.Default(): ask for
	// the word pong, expect it and a normal finish.
	Probe probe.Spec `yaml:"probe,omitempty"`
	// Continuation verifies, rather than trusts, the prefill capability of
	// every target that declares it: a continuation probe (a known text cut
	// mid-word, sent as an assistant prefill, must be continued, not
	// restarted; lifecycle.JudgeProbe) at start, on each reload, and with
	// each of its active probes when they are enabled. A
	// target that fails it completes no partial answer from a prefill (it
	// replays it on a route with replay: true, or is not used for it) until
	// it passes; /admin/state, brownout_target_prefill_verified and
	// prefill.verdict events show the verdict. A probe that gets no answer
	// (an error other than a 400) gives no verdict. Turned off, the
	// verdicts are dropped. Default false.
	Continuation bool `yaml:"continuation,omitempty"`
}

// custom reports whether a probe is configured (otherwise the default).
func (p *ProbesConfig) custom() bool {
	s := &p.Probe
	return s.Name != "" || s.System != "" || s.Prompt != "" || s.MaxTokens != 0 || len(s.Checks) > 0
}

// validate adds the problems of the probes section.
func (p *ProbesConfig) validate(doc *yamlfile.Doc, add func(path, format string, args ...any)) yamlfile.Errors {
	var es yamlfile.Errors
	if err := p.Config.Validate(); err != nil {
		add("probes", "%v", err)
	}
	if p.custom() {
		if _, err := p.Probe.Definition(doc, "probes.probe"); err != nil {
			var ye yamlfile.Errors
			if errors.As(err, &ye) {
				es = append(es, ye...)
			} else {
				add("probes.probe", "%v", err)
			}
		}
	}
	return es
}

// definition returns the probe to send (the configuration, read from
// file, is validated; relative schema files resolve next to it).
func (p *ProbesConfig) definition(file string) probe.Definition {
	if !p.custom() {
		return probe.Default()
	}
	d, err := p.Probe.Definition(&yamlfile.Doc{File: file}, "probes.probe")
	if err != nil {
		return probe.Default() // unreachable after validation
	}
	return d
}

// probeRateLimited is the Class of a probe.result event for a probe the
// provider refused for rate (not a failure).
const probeRateLimited = "rate_limited"

// prober runs the probe scheduler for a server: one goroutine that sleeps
// until the next probe is due and one short-lived goroutine per probe.
type prober struct {
	s    *Server
	wake chan struct{}

	mu      sync.Mutex
	cfg     ProbesConfig // in effect; zero when disabled
	sched   *probe.Scheduler
	def     probe.Definition
	targets map[string]bool
	// due are the targets with prefill to check next (Continuation).
	due []string
}

func newProber(s *Server) *prober {
	return &prober{s: s, wake: make(chan struct{}, 1), targets: map[string]bool{}}
}

// configure applies a (re)loaded configuration at now: a changed probes
// section starts a fresh schedule; otherwise targets are added and removed.
func (p *prober) configure(now time.Time, cfg *Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checkPrefill(cfg)
	if !cfg.Probes.Enabled {
		p.cfg, p.sched, p.targets = ProbesConfig{}, nil, map[string]bool{}
		p.poke()
		return
	}
	if p.sched == nil || !reflect.DeepEqual(p.cfg, cfg.Probes) {
		seed := cfg.Seed
		if seed == 0 {
			seed = uint64(now.UnixNano())
		}
		p.sched = probe.NewScheduler(cfg.Probes.Config, mrand.New(mrand.NewPCG(seed^0x70726f6265, seed)))
		p.cfg = cfg.Probes
		p.def = cfg.Probes.definition(cfg.file)
		p.targets = map[string]bool{}
	}
	want := map[string]bool{}
	for _, r := range cfg.Routes {
		for i := range r.Targets {
			want[r.Targets[i].Key()] = true
		}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the jitter draws follow a fixed order
	for _, k := range keys {
		if !p.targets[k] {
			p.sched.Add(now, k)
		}
	}
	for k := range p.targets {
		if !want[k] {
			p.sched.Remove(k)
		}
	}
	p.targets = want
	p.poke()
}

// checkPrefill queues the check of every target of cfg that declares
// prefill (probes.continuation), at start and on each reload: a verdict
// is as fresh as the configuration. With the probe off, verdicts are
// dropped. Called with p.mu held.
func (p *prober) checkPrefill(cfg *Config) {
	if !cfg.Probes.Continuation {
		p.due = nil
		p.s.rt.Load().engine.ForgetPrefillVerdicts()
		return
	}
	seen := map[string]bool{}
	for _, r := range cfg.Routes {
		for i := range r.Targets {
			t := &r.Targets[i]
			if k := t.Key(); t.Capabilities.Prefill && !seen[k] && !slices.Contains(p.due, k) {
				seen[k] = true
				p.due = append(p.due, k)
			}
		}
	}
	p.poke()
}

// poke wakes the loop to recompute its next wake-up.
func (p *prober) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// state returns the probe state of every target (nil when disabled).
func (p *prober) state() []probe.TargetState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sched == nil {
		return nil
	}
	return p.sched.State()
}

// start runs the probe loop on the server's background group until the
// server is closed (in-flight probes are cancelled).
func (p *prober) start() {
	ctx, cancel := context.WithCancel(context.Background())
	p.s.bg.Add(2)
	go func() {
		defer p.s.bg.Done()
		<-p.s.stop
		cancel()
	}()
	go func() {
		defer p.s.bg.Done()
		p.run(ctx)
	}()
}

// run probes until ctx is done; it waits for the probes it started.
func (p *prober) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		p.mu.Lock()
		next, ok := time.Time{}, false
		if p.sched != nil {
			next, ok = p.sched.Next()
		}
		checks := p.due
		p.due = nil
		timeout := p.cfg.Timeout.D()
		p.mu.Unlock()
		for _, target := range checks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.probePrefill(ctx, timeout, target)
			}()
		}
		var fire <-chan time.Time
		if ok {
			t.Reset(max(time.Until(next), 0))
			fire = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
			continue
		case <-fire:
		}
		now := time.Now()
		p.mu.Lock()
		var due []string
		sched, def, timeout := p.sched, p.def, p.cfg.Timeout.D()
		if sched != nil {
			due = sched.Due(now)
		}
		p.mu.Unlock()
		for _, target := range due {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.probeOne(ctx, sched, def, timeout, target)
			}()
		}
	}
}

// probeOne sends one probe, judges it and acts on the verdict.
func (p *prober) probeOne(ctx context.Context, sched *probe.Scheduler, def probe.Definition, timeout time.Duration, key string) {
	rt := p.s.rt.Load()
	var o probe.Outcome
	t := rt.target(key)
	if t == nil {
		o = probe.Outcome{Reason: "target not configured"}
	} else {
		if timeout <= 0 {
			timeout = sched.Config().Timeout.D()
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := p.send(pctx, rt, t, def)
		cancel()
		if ctx.Err() != nil {
			return // shutting down: no verdict
		}
		o = def.Evaluate(resp, err)
	}
	now := time.Now()
	p.mu.Lock()
	if p.sched != sched {
		p.mu.Unlock()
		return // reconfigured meanwhile
	}
	act := sched.Report(now, key, o)
	p.mu.Unlock()
	p.poke()

	ev := probe.Event(now, key, o)
	ev.Name = def.Name
	if o.RateLimited {
		ev.Class = probeRateLimited
	}
	p.s.emit(ev)
	eng := p.s.rt.Load().engine
	if !o.RateLimited {
		// A probe success only resets the failure count: it never closes a
		// breaker (policy.Engine.ProbeResult).
		_ = eng.ProbeResult(now, key, o.OK)
	}
	if act.Kind == probe.ActionOpenBreaker {
		_ = eng.Signal(now, key, "probe_failures", policy.Trip)
		p.s.log.Warn("probes failing; breaker opened", "target", key, "failures", act.Failures, "reason", act.Reason)
	}
	if t != nil && t.Capabilities.Prefill && rt.cfg.Probes.Continuation {
		p.probePrefill(ctx, timeout, key)
	}
}

// prefillProbeTimeout bounds a continuation probe when no probe timeout is
// configured (probe.Config's default).
const prefillProbeTimeout = 10 * time.Second

// probePrefill sends the continuation probe to a target that declares
// prefill and hands the verdict to the policy engine (PrefillVerdict): a
// 400 (the prefill rejected) or an answer that does not continue the cut
// text fails; no answer gives no verdict.
func (p *prober) probePrefill(ctx context.Context, timeout time.Duration, key string) {
	rt := p.s.rt.Load()
	t := rt.target(key)
	if t == nil || !t.Capabilities.Prefill {
		return
	}
	if timeout <= 0 {
		timeout = prefillProbeTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	resp, err := p.sendRequest(pctx, rt, t, lifecycle.ProbeRequest(t.Model))
	cancel()
	if ctx.Err() != nil {
		return // shutting down: no verdict
	}
	ok, reason, has := lifecycle.ProbeVerdict(resp, err)
	if !has {
		p.s.log.Debug("continuation probe got no answer; no verdict", "target", key, "error", err)
		return
	}
	_ = p.s.rt.Load().engine.PrefillVerdict(key, ok)
	p.s.emit(events.Event{Time: time.Now(), Kind: events.PrefillVerdict, Target: key, Name: "continuation", OK: ok, Reason: reason})
	if !ok {
		p.s.log.Warn("continuation probe failed: the target's prefill is not used", "target", key, "reason", reason)
	}
}

// send makes the probe request to t through its provider's client.
func (p *prober) send(ctx context.Context, rt *runtime, t *policy.Target, def probe.Definition) (*llm.Response, error) {
	return p.sendRequest(ctx, rt, t, def.RequestFor(t.Model))
}

// sendRequest makes a probe request to t through its provider's client.
func (p *prober) sendRequest(ctx context.Context, rt *runtime, t *policy.Target, req *llm.Request) (*llm.Response, error) {
	u := rt.upstreams[t.Provider]
	if u == nil {
		return nil, fmt.Errorf("no provider named %q", t.Provider)
	}
	req, err := t.Request(req)
	if err != nil {
		return nil, err
	}
	hr, err := u.newRequest(ctx, req, "probe_"+p.s.newID())
	if err != nil {
		return nil, err
	}
	resp, err := u.do(hr)
	if err != nil {
		return nil, scrubURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, u.codec.DecodeError(resp.StatusCode, resp.Header, body)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return nil, scrubURL(err)
	}
	r, err := u.codec.DecodeResponse(body)
	if err != nil {
		return nil, fmt.Errorf("malformed answer: %w", err)
	}
	return r, nil
}

// target returns the configuration of a provider:model target (its first
// appearance in the routes), or nil.
func (rt *runtime) target(key string) *policy.Target {
	for i := range rt.cfg.Routes {
		for j := range rt.cfg.Routes[i].Targets {
			if t := &rt.cfg.Routes[i].Targets[j]; t.Key() == key {
				return t
			}
		}
	}
	return nil
}
