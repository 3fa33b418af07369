package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/gateway/usage"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/llm/inbound"
)

// Options are a Server's collaborators. The zero value is usable.
type Options struct {
	// Logger receives operational logs. Default: slog.Default().
	Logger *slog.Logger
	// Events also receives every event of the log (tests, the live scenario
	// engine). It must not block.
	Events events.Sink
	// ConfigPath is the file ReloadFile (SIGHUP, file watching) reads.
	ConfigPath string
	// LookupEnv resolves ${NAME} in reloaded files. Default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Transport replaces the upstream transports (tests). Default: per
	// protocol, a NewTransport.
	Transport http.RoundTripper
	// TracerProvider receives the gateway's spans (tests, an application
	// embedding the gateway), in place of the OTLP exporter that tracing:
	// and the OTEL_* variables configure. Default nil: that exporter, when
	// tracing is on (see TracingConfig).
	TracerProvider trace.TracerProvider
}

// Server is the gateway: an OpenAI- and Anthropic-compatible HTTP server that
// executes the decisions of a policy.Engine against upstream providers. Its
// configuration can be swapped at run time (Reload); requests in flight
// finish on the configuration they started with.
type Server struct {
	opts  Options
	log   *slog.Logger
	bus   events.Bus
	m     *metrics
	rt    atomic.Pointer[runtime]
	idem  *idemStore
	convs *conversations // Responses conversations for previous_response_id
	cache *responseCache
	usage atomic.Pointer[usage.Writer]
	al    *alertLoop
	pr    *prober // active probes
	in    inboundLimits
	mem   byteBudget // limits.max_inflight_bytes

	idPrefix string
	idSeq    atomic.Uint64
	draining atomic.Bool
	reloadMu sync.Mutex
	trs      map[Protocol]http.RoundTripper
	handler  http.Handler
	version  atomic.Uint64
	bg       sync.WaitGroup
	stop     chan struct{}
	stopOnce sync.Once
	fleet    *fleetState              // nil unless state.backend is redis
	tracer   *tracing.Tracer          // nil: tracing off
	tp       *sdktrace.TracerProvider // the exporter's provider this server started, or nil
}

// runtime is one loaded configuration: everything a request needs, swapped
// atomically on reload.
type runtime struct {
	cfg        *Config
	version    string // sha256 prefix of the normalized config
	seq        uint64
	loadedAt   time.Time
	engine     *policy.Engine
	upstreams  map[string]*upstream
	cacheable  map[string]bool // routes whose answers are cached
	adminToken []byte
	usagePath  string
	detectors  *evals.Detectors // nil when disabled
	action     policy.Action    // "" for none
	refusals   []string
	clients    *clients.Table // nil: an open gateway
	// inflightBytes is the byte budget of requests in flight.
	inflightBytes int64
	redact        *redactor
	labels        *labelSet // the label values metrics may carry
}

// New builds a server from a validated configuration (see LoadConfig).
func New(cfg *Config, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	var pfx [4]byte
	_, _ = rand.Read(pfx[:])
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		idem:     newIdemStore(cfg.Idempotency),
		convs:    newConversations(),
		cache:    newResponseCache(cfg.Cache),
		idPrefix: "req_" + hex.EncodeToString(pfx[:]) + "_",
		stop:     make(chan struct{}),
	}
	s.trs = map[Protocol]http.RoundTripper{}
	for _, p := range []Protocol{ProtocolAuto, ProtocolHTTP1, ProtocolH2C} {
		if opts.Transport != nil {
			s.trs[p] = opts.Transport
		} else {
			s.trs[p] = NewTransport(p, TransportOptions{})
		}
	}
	s.m = newMetrics(func() *policy.Engine {
		if rt := s.rt.Load(); rt != nil {
			return rt.engine
		}
		return nil
	}, s.bus.Dropped)
	s.m.labels = func() *labelSet {
		if rt := s.rt.Load(); rt != nil {
			return rt.labels
		}
		return nil
	}
	s.m.genai = func() bool {
		rt := s.rt.Load()
		return rt != nil && rt.cfg.Metrics.GenAI
	}
	s.m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "brownout_inflight_bytes",
		Help: "Bytes the requests in flight hold of the byte budget (limits.max_inflight_bytes): bodies, decoded estimates, held answers."},
		func() float64 { return float64(s.mem.used.Load()) }))
	s.al = newAlertLoop(s)
	if err := s.startTracing(cfg); err != nil {
		return nil, err
	}
	if err := s.startFleet(cfg); err != nil {
		return nil, err
	}
	rt, err := s.build(cfg, nil)
	if err != nil {
		return nil, err
	}
	if err := s.swapUsage(rt.usagePath, ""); err != nil {
		return nil, err
	}
	s.rt.Store(rt)
	s.log.Info("in-flight byte budget", "max_inflight_bytes", rt.inflightBytes, "derived", cfg.Limits.MaxInflightBytes == 0)
	s.runFleet()
	s.rotateUsage(time.Now())
	s.al.configure(cfg)
	s.pr = newProber(s)
	s.pr.configure(time.Now(), cfg)
	s.pr.start()
	s.warnUnqualified(cfg)
	s.handler = s.routes()
	s.bg.Add(2)
	go s.tickLoop()
	go s.flushLoop()
	return s, nil
}

// build makes a runtime from cfg, keeping old's engine when the policy
// configuration is unchanged, and otherwise carrying its breaker and health
// state into the new engine (policy.Engine.Reload).
func (s *Server) build(cfg *Config, old *runtime) (*runtime, error) {
	rt := &runtime{
		cfg:       cfg,
		version:   configVersion(cfg),
		seq:       s.version.Add(1),
		loadedAt:  time.Now(),
		upstreams: map[string]*upstream{},
		cacheable: map[string]bool{},
		usagePath: cfg.Usage.File,
	}
	if t := cfg.Admin.Token.Value(); t != "" {
		rt.adminToken = []byte(t)
	}
	rt.inflightBytes = cfg.Limits.maxInflightBytes()
	if err := s.buildTrust(rt, old); err != nil {
		return nil, err
	}
	if !cfg.Detectors.Disable {
		var oldDet *evals.Detectors
		var oldCfg *evals.DetectorConfig
		if old != nil {
			oldDet, oldCfg = old.detectors, &old.cfg.Detectors.DetectorConfig
		}
		rt.detectors = evals.ReloadDetectors(oldDet, oldCfg, cfg.Detectors.DetectorConfig, false)
		rt.action = cfg.Detectors.Signal()
		rt.refusals = cfg.Detectors.Refusals
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	po := policy.Options{
		Rand:   mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		Events: (*serverSink)(s),
		Fleet:  s.fleetSink(),
	}
	var err error
	switch {
	case old == nil:
		rt.engine, err = policy.New(cfg.Config, po)
	case old.cfg.Seed != cfg.Seed:
		// A new seed: a new core (its randomness), which takes over the
		// breaker and health state of the targets both configurations use.
		rt.engine, err = old.engine.Reload(cfg.Config, po)
	default:
		// The simulator's rule too: unchanged routes and policy keep the
		// core; a change carries breaker and health state over.
		rt.engine, _, err = lifecycle.Reload(old.engine, cfg.Config, po)
	}
	if err != nil {
		return nil, err
	}
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		rt.upstreams[p.Name] = newUpstream(p, s.trs[p.Protocol])
		rt.upstreams[p.Name].codec = rt.redact.codec(rt.upstreams[p.Name].codec)
	}
	for _, r := range cfg.Routes {
		cached := cfg.Cache.Exact
		for _, t := range r.Tiers {
			if t == policy.TierCached {
				cached = true
			}
		}
		rt.cacheable[r.Name] = cached && s.cache != nil
	}
	return rt, nil
}

// configVersion identifies a configuration: a hash of its normalized form
// (secrets redacted, so equal files with rotated keys differ only by time).
func configVersion(cfg *Config) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%#v", *cfg))
	return hex.EncodeToString(h[:6])
}

// emit is the one event path: metrics, usage records, alert evaluation,
// the /admin/events bus and the caller's sink. The event is passed on by
// pointer: it is emitted deep in a request's stack (policy decisions), and
// a held stream keeps the stack its deepest call needed.
func (s *Server) emit(ev events.Event) { s.emitEvent(&ev) }

// serverSink is the decision core's sink: the server's event path in one
// frame (events.SinkFunc(s.emit) takes two, each with a copy of the event).
type serverSink Server

func (s *serverSink) Emit(ev events.Event) { (*Server)(s).emitEvent(&ev) }

func (s *Server) emitEvent(ev *events.Event) {
	s.m.emit(ev)
	if ev.Kind == events.AttemptEnd {
		s.writeUsage(ev)
		if ev.Client != "" {
			s.charge(ev)
		}
	}
	s.al.observe(ev)
	s.publish(ev)
	s.shareHealth(ev)
	s.logStore(ev)
}

// writeUsage writes the usage record of an attempt.end event.
//
//go:noinline
func (s *Server) writeUsage(ev *events.Event) {
	if w := s.usage.Load(); w != nil {
		rec := usage.FromEvent(*ev)
		w.Write(&rec)
	}
}

// publish hands an event to the /admin/events bus and the caller's sink.
//
//go:noinline
func (s *Server) publish(ev *events.Event) {
	s.bus.Emit(*ev)
	if s.opts.Events != nil {
		s.opts.Events.Emit(*ev)
	}
}

// Emit sends an event through the gateway's event path (for probes and
// detectors run next to it).
func (s *Server) Emit(ev events.Event) { s.emit(ev) }

// Subscribe returns future events (the /admin/events stream) and a cancel
// function.
func (s *Server) Subscribe(buffer int) (<-chan events.Event, func()) { return s.bus.Subscribe(buffer) }

// Engine returns the decision core in effect.
func (s *Server) Engine() *policy.Engine { return s.rt.Load().engine }

// Handler returns the HTTP handler serving every endpoint.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.handleInbound(mux)
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if s.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("draining\n"))
			return
		}
		if s.refuseWithoutStore() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("state store unavailable\n"))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", s.metricsAuth(s.m.handler()))
	mux.HandleFunc("GET /admin/state", s.admin(s.serveState))
	mux.HandleFunc("GET /admin/events", s.admin(s.serveEvents))
	mux.HandleFunc("POST /admin/reload", s.admin(s.serveReload))
	mux.Handle("/", inbound.Fallback(mux)) // every other path: an error in its API's shape
	return s.recoverPanics(mux)
}

// recoverPanics turns a panic in one request into a 500 (when nothing was
// written yet) and a log line with the stack; the process keeps serving.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.m.panics.Inc()
			s.log.Error("panic serving request", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !tw.wrote {
				inbound.WriteError(w, r, &llm.Error{Status: 500, Type: llm.ErrServer, Message: "internal gateway error"})
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// trackingWriter notes whether anything reached the client.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(p)
}

func (t *trackingWriter) Flush() {
	t.wrote = true
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// With client keys configured it needs one, as the inference endpoints
// do, and lists only the routes that key may use, without their targets
// (which upstream serves a route is the operator's business).
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	rt := s.rt.Load()
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
		// Targets are the route's provider:model targets, in order (an
		// open gateway only).
		Targets []string `json:"targets,omitempty"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	var acct *clients.Account
	if rt.clients.Len() > 0 {
		var ok bool
		if acct, ok = rt.clients.Lookup(presentedKey(r, llm.FormatOpenAI)); !ok {
			s.m.rejected(clientUnknown, rejUnauthorized)
			w.Header().Set("WWW-Authenticate", `Bearer realm="brownout"`)
			f, _ := codecs.Lookup(llm.FormatOpenAI)
			writeLLMError(w, f.Codec, &llm.Error{Status: 401, Type: llm.ErrAuthentication,
				Message: "a valid client key is required (Authorization: Bearer KEY, x-api-key: KEY or x-goog-api-key: KEY)"})
			return
		}
	}
	for _, rc := range rt.cfg.Routes {
		if acct != nil && !acct.Allows(rc.Name) {
			continue
		}
		m := model{ID: rc.Name, Object: "model", Created: rt.loadedAt.Unix(), OwnedBy: "brownout"}
		for i := range rc.Targets {
			if acct == nil {
				m.Targets = append(m.Targets, rc.Targets[i].Key())
			}
		}
		out.Data = append(out.Data, m)
	}
	writeJSON(w, http.StatusOK, out)
}

// newID returns a request id: a per-process random prefix and a counter.
func (s *Server) newID() string {
	return s.idPrefix + strconv.FormatUint(s.idSeq.Add(1), 36)
}

// tickLoop drives the engine's timers (half-open, windows).
func (s *Server) tickLoop() {
	defer s.bg.Done()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			e := s.rt.Load().engine
			e.Tick(now)
			next := time.Second
			if nt := e.NextTick(); !nt.IsZero() && nt.Sub(now) < next {
				next = max(nt.Sub(now), 10*time.Millisecond)
			}
			t.Reset(next)
		}
	}
}

// flushLoop flushes usage records once a second.
func (s *Server) flushLoop() {
	defer s.bg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.rotateUsage(now)
			if w := s.usage.Load(); w != nil {
				if err := w.Flush(); err != nil {
					s.log.Error("usage records", "err", err)
				}
			}
		}
	}
}

// swapUsage opens path (when it changed) and retires the old writer.
func (s *Server) swapUsage(path, oldPath string) error {
	if path == oldPath && (path == "" || s.usage.Load() != nil) {
		return nil
	}
	var w *usage.Writer
	if path != "" {
		var err error
		if w, err = usage.OpenFile(path); err != nil {
			return err
		}
	}
	if old := s.usage.Swap(w); old != nil {
		if err := old.Close(); err != nil {
			s.log.Error("usage records", "err", err)
		}
	}
	return nil
}

// Serve accepts connections on ln until ctx is done, then shuts down (see
// ShutdownConfig): /readyz turns 503 while requests are still served for
// the lame-duck period, then the listener closes and requests and streams
// in flight get up to the drain time to finish. Those still open at the
// drain deadline are cut: a stream ends with an in-band error event in its
// API's shape, a request not yet answered gets a 503, and the connections
// close once they are written (or after cutGrace).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, cut := context.WithCancelCause(context.Background())
	defer cut(nil)
	lim := &s.rt.Load().cfg.Limits
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: lim.readHeaderTimeout(),
		MaxHeaderBytes:    lim.maxHeaderBytes(),
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs.Protocols = &p
	s.warnExposure(ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	sh := s.rt.Load().cfg.Shutdown
	if lame := sh.lameDuck(); lame > 0 {
		s.log.Info("lame duck: /readyz reports draining", "lame_duck", lame)
		t := time.NewTimer(lame)
		select {
		case <-t.C:
		case err := <-errc:
			t.Stop()
			return err
		}
	}
	drain := or(sh.Drain.D(), defaultDrain)
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("drain deadline passed; ending what is still open with an error", "drain", drain)
		cut(errShuttingDown)
		gctx, gcancel := context.WithTimeout(context.Background(), cutGrace)
		defer gcancel()
		if err = hs.Shutdown(gctx); err != nil {
			err = hs.Close()
		}
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// cutGrace is how long the requests cut at the drain deadline get to write
// their error before their connections are closed.
const cutGrace = 2 * time.Second

// errShuttingDown is the cancellation cause of the requests still in
// flight at the drain deadline.
var errShuttingDown = errors.New("the gateway is shutting down")

// shutdownError is the error of a request cut at the drain deadline (ctx
// is its context), nil for any other.
func shutdownError(ctx context.Context, committed bool) *llm.Error {
	if !errors.Is(context.Cause(ctx), errShuttingDown) {
		return nil
	}
	e := &llm.Error{Status: 503, Type: llm.ErrOverloaded, Code: "shutting_down", RetryAfter: time.Second,
		Message: "the gateway is shutting down; retry the request"}
	if committed {
		e.Message = "the gateway is shutting down; the answer above is incomplete"
	}
	return e
}

// Close stops background work and flushes usage records. Call it after
// Serve returns.
func (s *Server) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.bg.Wait()
	s.stopFleet()
	for _, tr := range s.trs {
		if c, ok := tr.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
	s.al.close()
	s.stopTracing()
	if w := s.usage.Swap(nil); w != nil {
		return w.Close()
	}
	return nil
}

// routeCfg returns the configuration of a route, or nil.
func (rt *runtime) routeCfg(name string) *policy.Route {
	for i := range rt.cfg.Routes {
		if rt.cfg.Routes[i].Name == name {
			return &rt.cfg.Routes[i]
		}
	}
	return nil
}
