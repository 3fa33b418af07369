package scenarios

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/evals/client"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/internal/netfault"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/scenarios/score"
)

// liveDrain is how long requests in flight may finish after a live run is
// stopped early (stop_when, Ctrl-C) before they are canceled.
const liveDrain = 5 * time.Second

// liveRun is one live game day: mock providers and (unless black box) the
// gateway in-process on loopback, open-loop load in real time.
type liveRun struct {
	s     *Scenario
	opts  Options
	start time.Time

	mu       sync.Mutex
	evs      []events.Event
	evalRecs []score.EvalRecord

	provs    map[string]*mockprovider.Provider
	specs    map[string]mockprovider.ProviderSpec
	srv      *gateway.Server
	gwURL    string
	blackBox bool                      // scored from the mocks' journals, the gateway's events unread
	external bool                      // a running gateway at a URL: the mocks listen where the scenario says
	gwConfig string                    // else the gateway config file ("": the scenario's inline gateway)
	headers  map[string]gateway.Secret // sent with every user request
	hc       *http.Client
	sinks    map[string]*sinkServer
	steps    *stepper // the timeline, interpreted on the live run

	nreq           atomic.Int64
	inflight       sync.WaitGroup
	requests, errs atomic.Int64
	stopWin        stopWindow  // per-second user results for stop_when
	stopSLO        score.SLO   // the scenario's, with defaults: stop_when judges by it
	corrupt        corruptions // stop_when's view of corrupted answers
	targetCount    map[string]int
	aborted        string
	stopOnce       sync.Once
	prom           *liveProm // alerts.prometheus_rules, stop_when.promql; nil without
	stop           chan struct{}
	// err stops the run with an error, as in the simulator: a timeline
	// step that could not be carried out (a fault a mock refused).
	err              error
	reqCtx           context.Context // requests in flight; canceled after the drain
	reqCancel        context.CancelFunc
	oldJournals      []score.JournalEntry // journals of killed mock instances
	promptsByTraffic [][]string
	traces           *traceKeeper // the gateway's spans (Options.Traces); nil when off

	// replicas are the gateway's replicas (srv is the first) and
	// replicaURLs their addresses; storeProxy fronts their shared store.
	replicas    []*gateway.Server
	replicaURLs []string
	storeProxy  *netfault.Proxy
}

// Emit records an event (events.Sink); safe for concurrent use.
func (l *liveRun) Emit(e events.Event) {
	l.mu.Lock()
	e.Seq = uint64(len(l.evs)) + 1
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

// sinkServer is a webhook alert receiver that can be taken down.
type sinkServer struct {
	url  string
	down atomic.Bool
	got  atomic.Int64
	srv  *http.Server
}

func startSink() (*sinkServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	k := &sinkServer{url: "http://" + ln.Addr().String() + "/alerts"}
	k.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if k.down.Load() {
			http.Error(w, "sink down", http.StatusServiceUnavailable)
			return
		}
		k.got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = k.srv.Serve(ln) }()
	return k, nil
}

// liveGateway is the gateway a live run drives: a running one at URL, or
// brownout's from a Config file started in-process. BlackBox scores it
// from what its users and the mocks saw, its own events unread.
type liveGateway struct {
	url, config string
	headers     map[string]gateway.Secret
	blackBox    bool
}

func runLive(ctx context.Context, s *Scenario, seed uint64, opts Options) (*score.Result, error) {
	return runLiveWith(ctx, s, seed, opts, liveGateway{url: s.Gateway.URL, config: s.env.gatewayFile,
		headers: s.Gateway.Headers, blackBox: s.env.blackBox})
}

func runLiveWith(ctx context.Context, s *Scenario, seed uint64, opts Options, gw liveGateway) (*score.Result, error) {
	l := &liveRun{s: s, opts: opts, provs: map[string]*mockprovider.Provider{}, specs: map[string]mockprovider.ProviderSpec{},
		sinks: map[string]*sinkServer{}, targetCount: map[string]int{}, stop: make(chan struct{}),
		blackBox: gw.blackBox, headers: gw.headers, external: gw.url != "", gwConfig: gw.config, stopSLO: s.SLO.slo().WithDefaults()}
	l.steps = newStepper(s, l)
	if opts.Traces && !l.blackBox {
		l.traces = newTraceKeeper()
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}
	l.hc = &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	defer l.closeAll()

	// Mock providers. In-process runs pick free ports (the gateway config is
	// rewritten to them); black-box runs use the ports the scenario names.
	for _, p := range s.env.providers {
		spec := p.spec
		if spec.Seed == 0 {
			spec.Seed = seedFor(seed, "provider/"+p.name)
		}
		if !l.external {
			spec.Listen = "127.0.0.1:0"
		}
		pv, err := mockprovider.Start(spec, mockprovider.Options{})
		if err != nil {
			return nil, fmt.Errorf("start mock %s: %w", p.name, err)
		}
		spec.Listen = pv.Addr
		l.provs[p.name] = pv
		l.specs[p.name] = spec
	}
	for _, k := range s.Alerts.Sinks {
		if k.Kind != "webhook" {
			continue
		}
		sk, err := startSink()
		if err != nil {
			return nil, err
		}
		l.sinks[k.Name] = sk
	}

	if l.external {
		l.gwURL = strings.TrimSuffix(gw.url, "/")
	} else {
		stop, err := l.startGateways(ctx, seed)
		if err != nil {
			return nil, err
		}
		defer stop()
	}

	prom, err := l.startProm(ctx)
	if err != nil {
		return nil, err
	}
	defer prom.close()
	l.prom = prom

	l.promptsByTraffic = make([][]string, len(s.Traffic))
	for i, t := range s.Traffic {
		l.promptsByTraffic[i] = s.prompts[i]
		if len(l.promptsByTraffic[i]) == 0 {
			l.promptsByTraffic[i] = syntheticPrompts(t.PromptTokens, 256)
		}
	}

	l.reqCtx, l.reqCancel = context.WithCancel(context.WithoutCancel(ctx))
	defer l.reqCancel()
	l.start = time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range s.Traffic {
		wg.Add(1)
		go func() { defer wg.Done(); l.generate(runCtx, i, seed) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); l.timeline(runCtx) }()
	wg.Add(1)
	go func() { defer wg.Done(); l.monitor(runCtx) }()

	timer := time.NewTimer(s.Duration.D())
	select {
	case <-timer.C:
	case <-ctx.Done():
		l.aborted = "canceled"
	case <-l.stop:
	}
	timer.Stop()
	end := time.Now()
	cancel()
	wg.Wait()
	// Requests in flight finish, as in the simulator: at the scenario's end
	// each may take up to its client timeout (a long stream started in the
	// last seconds is not a failure of the gateway); a run stopped early
	// (stop_when, Ctrl-C) gives them a short drain. Then they are canceled.
	drain := liveDrain
	l.mu.Lock()
	stopped := l.aborted != ""
	l.mu.Unlock()
	if !stopped {
		drain = max(drain, l.maxClientTimeout()+time.Second)
	}
	drained := make(chan struct{})
	go func() { l.inflight.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drain):
		l.reqCancel()
		<-drained
	}
	l.mu.Lock()
	runErr := l.err
	l.mu.Unlock()
	if runErr != nil {
		return nil, runErr
	}
	l.steps.endActive(end)
	if l.srv != nil {
		for _, srv := range l.replicas {
			srv.EvaluateAlerts(time.Now())
		}
		time.Sleep(200 * time.Millisecond) // let deliveries report
	}

	l.mu.Lock()
	evs := append([]events.Event(nil), l.evs...)
	recs := append([]score.EvalRecord(nil), l.evalRecs...)
	l.mu.Unlock()
	// Events from concurrent goroutines arrive nearly in time order; sort
	// them so the log reads as a timeline, then renumber.
	slices.SortStableFunc(evs, func(a, b events.Event) int { return a.Time.Compare(b.Time) })
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	journal := l.oldJournals
	for _, p := range s.env.providers {
		journal = append(journal, convertJournal(l.provs[p.name].Model().Journal())...)
	}
	in := score.Input{Events: evs, Journal: journal, Evals: recs, Start: l.start, End: end,
		SLO: s.SLO.slo(), Primary: s.env.primary,
		Prices: s.env.scorePrices(), BlackBox: l.blackBox}
	if len(in.Primary) > 0 {
		for _, v := range in.Primary {
			in.PrimaryTarget = v
			break
		}
	}
	sc := score.Score(in)
	if sc.PromAlerts, err = l.prom.score(ctx, sc, l.start, end); err != nil {
		return nil, err
	}
	res := finish(s, sc, in, score.ModeLive, seed, l.aborted)
	res.Start = l.start
	res.Elapsed = end.Sub(l.start)
	if res.TraceSample = l.traces.sample(); res.TraceSample != nil && l.opts.Progress != nil {
		_, _ = res.TraceSample.WriteTo(l.opts.Progress)
	}
	return res, nil
}

func (l *liveRun) closeAll() {
	for _, p := range l.provs {
		p.Close()
	}
	for _, k := range l.sinks {
		_ = k.srv.Close()
	}
}

// gatewayConfig loads the gateway file and points it at the in-process
// mocks and alert sinks.
//
// An empty path is the scenario's inline gateway (inlineGatewayFile).
func (l *liveRun) gatewayConfig(path string, seed uint64) (*gateway.Config, error) {
	var cfg *gateway.Config
	var err error
	if path == "" {
		var data []byte
		if data, err = l.s.inlineGatewayFile(); err == nil {
			cfg, err = gateway.ParseConfig(l.s.file+" (inline gateway)", data, gateway.LoadOptions{LookupEnv: lookupPlaceholder})
		}
	} else {
		cfg, err = gateway.LoadConfig(path, gateway.LoadOptions{LookupEnv: lookupPlaceholder})
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		mp, ok := l.provs[p.Name]
		if !ok {
			continue
		}
		switch p.Kind {
		case gateway.KindOpenAI, gateway.KindOpenAICompatible, gateway.KindAzure:
			p.BaseURL = mp.URL + "/v1"
		default:
			p.BaseURL = mp.URL
		}
	}
	cfg.Usage.File = ""
	cfg.Reload.Disable = true
	cfg.Seed = seed
	if len(l.s.Alerts.Sinks) > 0 {
		cfg.Alerts.Sinks = nil
		for _, k := range l.s.Alerts.Sinks {
			as := gateway.AlertSink{Name: k.Name, Kind: k.Kind, Timeout: 0, Retries: -1}
			if sk := l.sinks[k.Name]; sk != nil {
				as.URL = gateway.NewSecret(sk.url)
			}
			cfg.Alerts.Sinks = append(cfg.Alerts.Sinks, as)
		}
	}
	return cfg, nil
}

// generate sends open-loop traffic for source i until ctx ends.
func (l *liveRun) generate(ctx context.Context, i int, seed uint64) {
	t := &l.s.Traffic[i]
	rnd := rand.New(rand.NewPCG(seed, seedFor(seed, "traffic/"+strconv.Itoa(i))))
	lmax := t.maxRate()
	if lmax <= 0 {
		return
	}
	next := time.Duration(0)
	for {
		if t.Arrival == "uniform" {
			r := t.RateAt(next)
			if r <= 0 {
				next += time.Second
				continue
			}
			next += time.Duration(float64(time.Second) / r)
		} else {
			next += time.Duration(rnd.ExpFloat64() / lmax * float64(time.Second))
			if rnd.Float64()*lmax > t.RateAt(next) {
				continue
			}
		}
		if next >= l.s.Duration.D() {
			return
		}
		if d := time.Until(l.start.Add(next)); d > 0 {
			tm := time.NewTimer(d)
			select {
			case <-ctx.Done():
				tm.Stop()
				return
			case <-tm.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		stream := rnd.Float64() < t.Stream.F()
		structured := rnd.Float64() < t.Structured.F()
		tools := t.Tools > 0 && rnd.Float64() < t.Tools.F() // no draw without: seeds keep their runs
		prompt := l.promptsByTraffic[i][rnd.IntN(len(l.promptsByTraffic[i]))]
		l.inflight.Add(1)
		go func() {
			defer l.inflight.Done()
			l.send(l.reqCtx, t, stream, structured, tools, prompt)
		}()
	}
}

// send makes one user request to the gateway and records what the user got.
func (l *liveRun) send(ctx context.Context, t *Traffic, stream, structured, tools bool, prompt string) {
	id := "req-" + strconv.FormatInt(l.nreq.Add(1), 10)
	req := llm.Request{Model: t.Route, Stream: stream, MaxTokens: t.MaxTokens, Temperature: t.Temperature, IncludeUsage: stream,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(prompt)}}}}
	shapeRequest(&req, structured, tools)
	format := llm.Format(t.Format)
	start := time.Now()
	if l.blackBox {
		l.Emit(events.Event{Time: start, Kind: events.RequestStart, RequestID: id, Route: t.Route, Stream: stream})
	}
	resp, target, tier, ttft, err := l.call(ctx, format, &req, id, t.ClientTimeout.D())
	end := time.Now()
	ok := err == nil
	if l.blackBox {
		if target == "" && ok {
			// A gateway that names no target may still answer with
			// the upstream's model; scoring prefers the journals.
			target = l.s.modelTarget(resp.Model)
		}
		e := events.Event{Time: end, Kind: events.RequestEnd, RequestID: id, Route: t.Route, Stream: stream,
			Duration: end.Sub(start), TTFT: ttft, Target: target, Tier: tier, Outcome: events.OutcomeServed}
		if !ok {
			e.Outcome = events.OutcomeFailed
		} else if tier != "" && tier != "primary" {
			e.Outcome = events.OutcomeDegraded
		}
		l.Emit(e)
	}
	l.requests.Add(1)
	l.mu.Lock()
	l.stopWin.recordID(end.Sub(l.start), id, score.GoodEnd(&l.stopSLO,
		score.EndFacts{OK: ok, Stream: stream, TTFT: ttft, Dur: end.Sub(start)}))
	if ok {
		l.targetCount[target]++
	}
	l.mu.Unlock()
	if !ok {
		l.errs.Add(1)
		return
	}
	ob := evals.Observe(resp, structured, nil)
	pass := !(ob.FinishReason == llm.FinishLength && (req.MaxTokens == 0 || ob.OutputTokens < req.MaxTokens)) &&
		(!structured || ob.JSONValid) && !ob.Refusal && ob.EmptyToolArgs == 0
	l.mu.Lock()
	l.evalRecs = append(l.evalRecs, score.EvalRecord{Time: end, RequestID: id, Target: target, Pass: pass})
	l.mu.Unlock()
}

// call performs one request in the client's wire format. It returns the
// answer, the serving target and tier the gateway named, and the time to the
// first token (or to the response, unstreamed).
func (l *liveRun) call(ctx context.Context, format llm.Format, req *llm.Request, id string, timeout time.Duration) (resp *llm.Response, target, tier string, ttft time.Duration, err error) {
	start := time.Now()
	resp, target, tier, err = l.do(ctx, format, req, id, timeout, func() {
		if ttft == 0 {
			ttft = time.Since(start)
		}
	})
	return
}

func (l *liveRun) do(ctx context.Context, format llm.Format, req *llm.Request, id string, timeout time.Duration, first func()) (*llm.Response, string, string, error) {
	codec, err := codecs.Codec(format)
	if err != nil {
		return nil, "", "", err
	}
	body, err := codec.EncodeRequest(req)
	if err != nil {
		return nil, "", "", err
	}
	path := "/v1/chat/completions"
	if format == llm.FormatAnthropic {
		path = "/v1/messages"
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(cctx, http.MethodPost, l.replicaURL(id)+path, bytes.NewReader(body))
	if err != nil {
		return nil, "", "", err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("X-Request-Id", id)
	hr.Header.Set("Authorization", "Bearer game-day")
	hr.Header.Set("x-api-key", "game-day")
	hr.Header.Set("anthropic-version", client.AnthropicVersion)
	for k, v := range l.headers {
		hr.Header.Set(k, v.Value())
	}
	res, err := l.hc.Do(hr)
	if err != nil {
		return nil, "", "", err
	}
	defer res.Body.Close()
	target := score.NormTarget(res.Header.Get(gateway.HeaderTarget))
	tier := res.Header.Get(gateway.HeaderTier)
	if strings.Contains(res.Header.Get("X-Brownout-Cache"), "stale") && tier == "" {
		tier = "cached"
	}
	if res.StatusCode/100 != 2 {
		b, _ := io.ReadAll(res.Body)
		return nil, target, tier, codec.DecodeError(res.StatusCode, llm.Header(res.Header), b)
	}
	if !req.Stream {
		b, err := io.ReadAll(res.Body)
		first()
		if err != nil {
			return nil, target, tier, err
		}
		r, err := codec.DecodeResponse(b)
		return r, target, tier, err
	}
	dec := codec.NewStreamDecoder(res.Body)
	out := &llm.Response{}
	var sb strings.Builder
	for {
		ev, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, target, tier, err
		}
		switch ev.Type {
		case llm.EventStart:
			out.Model = ev.Model
		case llm.EventTextDelta:
			first()
			sb.WriteString(ev.Text)
		case llm.EventFinish:
			out.FinishReason = ev.FinishReason
		case llm.EventUsage:
			if ev.Usage != nil {
				out.Usage = *ev.Usage
			}
		case llm.EventError:
			return nil, target, tier, ev.Err
		}
	}
	out.Content = sb.String()
	return out, target, tier, nil
}

// timeline performs the scenario's steps at their times.
func (l *liveRun) timeline(ctx context.Context) {
	type act struct {
		at    time.Duration
		step  int
		start bool
	}
	var acts []act
	for i := range l.s.Timeline {
		st := &l.s.Timeline[i]
		acts = append(acts, act{st.At.D(), i, true})
		if st.For > 0 && st.At+st.For < l.s.Duration {
			acts = append(acts, act{(st.At + st.For).D(), i, false})
		}
	}
	slices.SortStableFunc(acts, func(a, b act) int { return int(a.at - b.at) })
	for _, a := range acts {
		if d := time.Until(l.start.Add(a.at)); d > 0 {
			tm := time.NewTimer(d)
			select {
			case <-ctx.Done():
				tm.Stop()
				return
			case <-tm.C:
			}
		}
		if a.start {
			l.steps.start(a.step, time.Now())
		} else {
			l.steps.end(a.step, time.Now())
		}
	}
}

// The live engine as the environment of the timeline's steps (stepEnv;
// the steps themselves are interpreted by the stepper).

func (l *liveRun) addFault(now time.Time, prov string, f faults.Spec) (string, bool, error) {
	l.mu.Lock()
	p := l.provs[prov]
	l.mu.Unlock()
	if p == nil {
		return "", false, nil
	}
	id, err := p.Model().AddFault(now, f)
	return id, err == nil, err
}

func (l *liveRun) removeFault(prov, id string) {
	l.mu.Lock()
	p := l.provs[prov]
	l.mu.Unlock()
	if p != nil {
		p.Model().RemoveFault(id)
	}
}

func (l *liveRun) kill(prov string) {
	l.mu.Lock()
	p := l.provs[prov]
	l.mu.Unlock()
	if p == nil {
		return
	}
	// Keep what the killed instance journaled: its restart starts afresh.
	l.oldJournals = append(l.oldJournals, convertJournal(p.Model().Journal())...)
	p.Close()
}

// restart starts the killed provider again on the same address.
func (l *liveRun) restart(prov string) {
	spec, ok := l.specs[prov]
	if !ok {
		return
	}
	if pv, err := mockprovider.Start(spec, mockprovider.Options{}); err == nil {
		l.mu.Lock()
		l.provs[prov] = pv
		l.mu.Unlock()
	}
}

func (l *liveRun) reload(_ time.Time, st *Step) error {
	if l.srv == nil {
		return nil // a gateway at a URL: not ours to reload
	}
	return l.reloadReplicas(l.s.rel(st.Reload.Config))
}

func (l *liveRun) sinkDown(name string, down bool) {
	if k := l.sinks[name]; k != nil {
		k.down.Store(down)
	}
}

func (l *liveRun) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
	l.stopOnce.Do(func() { close(l.stop) })
}

// monitor prints progress every second and enforces stop_when.
func (l *liveRun) monitor(ctx context.Context) {
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	// Cumulative served counts by target, one snapshot a second: the line
	// shows the share of the last progressWindow, what users get now.
	var hist []map[string]int
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		elapsed := time.Since(l.start)
		if w := l.opts.Progress; w != nil {
			l.mu.Lock()
			now := maps.Clone(l.targetCount)
			l.mu.Unlock()
			hist = append(hist, now)
			var then map[string]int
			if k := len(hist) - 1 - int(progressWindow/time.Second); k >= 0 {
				then = hist[k]
				hist = hist[k:] // older snapshots are never read again
			}
			fmt.Fprintf(w, "[%s/%s, %s left] requests %d  errors %d  %s\n", elapsed.Round(time.Second), l.s.Duration,
				max(l.s.Duration.D()-elapsed, 0).Round(time.Second), l.requests.Load(), l.errs.Load(), shareLine(now, then))
		}
		if sw := l.s.StopWhen; sw != nil && l.checkStop(elapsed) {
			l.stopOnce.Do(func() { close(l.stop) })
			return
		}
	}
}

// progressWindow is the window of the live progress line's shares.
const progressWindow = 10 * time.Second

// shareLine prints each target's share of the requests served between
// two cumulative counts (then nil: since the start): "served last 10s:
// a:m 40%  b:m 60%".
func shareLine(now, then map[string]int) string {
	total := 0
	for k, n := range now {
		total += n - then[k]
	}
	if total == 0 {
		return "served last 10s: none"
	}
	parts := []string{"served last 10s:"}
	for _, k := range sortedKeys(now) {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*float64(now[k]-then[k])/float64(total)))
	}
	return strings.Join(parts, " ")
}

func (l *liveRun) checkStop(elapsed time.Duration) bool {
	if l.s.StopWhen.PromQL != "" {
		return l.checkPromStop(elapsed)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad func(string) bool
	if l.stopSLO.Correctness {
		for _, p := range l.provs {
			l.corrupt.follow(p.Model())
		}
		// A request judged now started at most For plus its client
		// timeout ago; older marks are never read again.
		l.corrupt.forget(l.start.Add(elapsed - l.s.StopWhen.For.D() - l.maxClientTimeout() - time.Second))
		bad = l.corrupt.bad
	}
	why, stop := l.stopWin.breached(l.s.StopWhen, elapsed, bad)
	if stop {
		l.aborted = why
	}
	return stop
}

// maxClientTimeout is the longest a user request of the run may last.
func (l *liveRun) maxClientTimeout() time.Duration {
	var d time.Duration
	for i := range l.s.Traffic {
		d = max(d, l.s.Traffic[i].ClientTimeout.D())
	}
	return d
}

// lookupPlaceholder resolves ${NAME} in a gateway file from the environment,
// with a placeholder for unset names: the mocks accept any key.
func lookupPlaceholder(name string) (string, bool) {
	if v, ok := os.LookupEnv(name); ok {
		return v, true
	}
	return "game-day-placeholder", true
}
