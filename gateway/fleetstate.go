package gateway

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/gateway/fleet"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// StateConfig says where the gateway's resilience state lives: in this
// process (memory, the default) or shared by a fleet of replicas in Redis.
// A fleet shares its breakers (with one fleet-wide half-open trial budget),
// its routes' retry budgets, its clients' requests and tokens per minute
// and spend budgets, its health demotions, its idempotency records and its
// cached answers (see the fleet package, idemfleet.go, cachefleet.go);
// concurrency caps stay per replica. The
// section is read at start: changing it needs a restart (a reload keeps
// the running store).
type StateConfig struct {
	// Backend is memory or redis. Default memory.
	Backend string `yaml:"backend,omitempty"`
	// URL of the Redis server, redis://[user:password@]host:port/db, usually
	// from the environment (${REDIS_URL}); never logged. Required for redis.
	URL Secret `yaml:"url,omitempty"`
	// Prefix starts every key and channel. Default "brownout".
	Prefix string `yaml:"prefix,omitempty"`
	// OnStoreUnavailable is what a replica does while the store is down or
	// slow (a store call failed or took longer than Timeout, and the store
	// has not answered since). Either way the replica emits state.degraded,
	// sets brownout_state_backend_up to 0 and resyncs when the store is
	// back. Policies:
	//   - local (the default): the replica keeps serving by its own state
	//     (breakers, budgets, client limits, idempotency records); no
	//     request waits for or fails because of the store.
	//   - fail_closed: the replica serves nothing that needs the fleet's
	//     state: every request on an inference endpoint is refused with 503
	//     (type overloaded, in the inbound API's shape) and Retry-After 1,
	//     and /readyz answers 503, so a load balancer sends the traffic to
	//     replicas that still reach the store. For a fleet whose client
	//     budgets or idempotency must never be exceeded N-fold.
	OnStoreUnavailable string `yaml:"on_store_unavailable,omitempty"`
	// Timeout bounds every store call; a slower one counts as unavailable.
	// Default 100ms.
	Timeout yamlfile.Duration `yaml:"timeout,omitempty"`
}

func (c *StateConfig) validate(add func(path, format string, args ...any)) {
	switch c.Backend {
	case "", "memory":
		if !c.URL.IsZero() {
			add("state.url", "only used with backend: redis")
		}
	case "redis":
		if c.URL.Value() == "" {
			add("state.url", "required for backend: redis (redis://host:port/db, e.g. ${REDIS_URL})")
		} else if _, err := fleet.NewRedis(c.URL.Value(), fleet.RedisOptions{}); err != nil {
			add("state.url", "not a redis URL (redis://[user:password@]host:port/db)")
		}
	default:
		add("state.backend", "unknown backend %q (memory or redis)", c.Backend)
	}
	switch c.OnStoreUnavailable {
	case "", "local", "fail_closed":
	default:
		add("state.on_store_unavailable", "unknown policy %q (local or fail_closed)", c.OnStoreUnavailable)
	}
}

// fleetState is a server's link to its fleet's store.
type fleetState struct {
	f       *fleet.Fleet
	store   *fleet.Redis
	records fleet.Records
	// timeout bounds each store call; lease is how long a pending
	// idempotency record holds its key.
	timeout, lease time.Duration
	failClosed     bool
	stop           context.CancelFunc
	done           chan struct{}
}

// stateUnavailable is the error of a request refused under fail_closed.
func stateUnavailable() *llm.Error {
	return &llm.Error{Status: 503, Type: llm.ErrOverloaded, RetryAfter: time.Second,
		Message: "the gateway's shared state store is unavailable (state.on_store_unavailable: fail_closed); retry shortly"}
}

// refuseWithoutStore reports whether requests are refused right now:
// fail_closed while the store is unavailable.
func (s *Server) refuseWithoutStore() bool {
	fs := s.fleet
	return fs != nil && fs.failClosed && !fs.f.Up()
}

// startFleet connects the server to the store its configuration names, if
// any. Its breakers then follow the fleet (policy.Options.Fleet).
func (s *Server) startFleet(cfg *Config) error {
	st := cfg.State
	if st.Backend != "redis" {
		return nil
	}
	store, err := fleet.NewRedis(st.URL.Value(), fleet.RedisOptions{Prefix: st.Prefix})
	if err != nil {
		return err
	}
	fleet.LogTo(s.log)
	up := prometheus.NewGauge(prometheus.GaugeOpts{Name: "brownout_state_backend_up",
		Help: "1 while the fleet's shared state store answers, 0 while the replica follows local state."})
	up.Set(1)
	s.m.reg.MustRegister(up, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "brownout_state_store_calls_total",
		Help: "Round trips this replica made to the fleet's shared state store."}, func() float64 { return float64(store.Calls()) }))
	f := fleet.New(store, func() *policy.Engine { return s.rt.Load().engine }, fleet.Options{
		Timeout: st.Timeout.D(),
		Clients: func() *clients.Table { return s.rt.Load().clientsOrNil() },
		Events:  (*serverSink)(s),
		Up: func(ok bool) {
			if ok {
				up.Set(1)
			} else {
				up.Set(0)
			}
		},
	})
	lease := cfg.Policy.RequestTimeout.D()
	if lease > 0 {
		lease += 30 * time.Second
	} else {
		lease = or(cfg.Idempotency.TTL.D(), 10*time.Minute)
	}
	s.fleet = &fleetState{f: f, store: store, records: store, timeout: or(st.Timeout.D(), 100*time.Millisecond), lease: lease,
		failClosed: st.OnStoreUnavailable == "fail_closed", done: make(chan struct{})}
	if s.cache != nil {
		s.cache.shared = newSharedCache(store, s.fleet.timeout, cfg.Cache.ttl()+cfg.Cache.maxStale(), f.Up)
	}
	return nil
}

// runFleet starts syncing once the first engine exists.
func (s *Server) runFleet() {
	fs := s.fleet
	if fs == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	fs.stop = cancel
	go func() {
		defer close(fs.done)
		if sc := s.cache.sharing(); sc != nil {
			go sc.run(ctx)
		}
		_ = fs.f.Run(ctx)
	}()
}

// stopFleet stops syncing and closes the store's connections.
func (s *Server) stopFleet() {
	if fs := s.fleet; fs != nil {
		fs.stop()
		<-fs.done
		_ = fs.store.Close()
	}
}

// reserveInFleet reserves dollars of acct's budget in the fleet's store
// as well (res already holds them locally), so that the fleet's replicas
// together admit no more than the budget: the store's spend (what the
// syncs added) and reservations are checked and the reservation added in
// one atomic step. It returns the refusal, if the store refuses. Without a
// fleet, without a budget or while the store is unavailable it refuses
// nothing: the replica follows its local state (state.on_store_unavailable:
// fail_closed refuses every request before this).
func (s *Server) reserveInFleet(ctx context.Context, acct *clients.Account, res *clients.Reservation, dollars float64) *clients.Decision {
	fs := s.fleet
	if fs == nil || dollars <= 0 || !fs.f.Up() {
		return nil
	}
	now := time.Now()
	budget, window, end := acct.Budget(now)
	if budget <= 0 {
		return nil
	}
	c, cancel := context.WithTimeout(ctx, fs.timeout)
	defer cancel()
	ok, spent, _, err := fs.store.Reserve(c, fleet.SpendKey(acct.ID(), window), budget, dollars, acct.BudgetPeriod()+time.Minute)
	if err != nil {
		s.log.Debug("budget reservation: state store unavailable, admitted by local state", "client", acct.ID())
		return nil
	}
	if !ok {
		d := clients.Decision{Verdict: clients.OverBudget, Limit: clients.LimitBudget, RetryAfter: time.Second}
		if spent >= budget {
			d.RetryAfter = max(end.Sub(now), time.Second)
		}
		return &d
	}
	res.Stored(window, dollars)
	return nil
}

// drawTokensInFleet draws tokens (a request's worst case, already taken
// from acct's own bucket) from the fleet's token bucket of acct's tokens
// per minute as well, so the replicas together admit no more than the
// limit: the syncs settle what the request really used when it ends
// (fleet.Buckets). It returns the refusal, if the store refuses. Without a
// fleet, without the limit or while the store is unavailable it refuses
// nothing, as reserveInFleet.
func (s *Server) drawTokensInFleet(ctx context.Context, acct *clients.Account, res *clients.Reservation, tokens int) *clients.Decision {
	fs := s.fleet
	if fs == nil || tokens <= 0 || !fs.f.Up() {
		return nil
	}
	tpm := acct.TokensPerMinute()
	if tpm <= 0 {
		return nil
	}
	c, cancel := context.WithTimeout(ctx, fs.timeout)
	defer cancel()
	ok, wait, err := fs.store.Draw(c, fleet.TokensKey(acct.ID()), float64(tpm), float64(tokens), time.Now())
	if err != nil {
		s.log.Debug("tokens per minute: state store unavailable, admitted by local state", "client", acct.ID())
		return nil
	}
	if !ok {
		return &clients.Decision{Verdict: clients.RateLimited, Limit: clients.LimitTokens, RetryAfter: wait}
	}
	res.DrewTokens(float64(tokens))
	return nil
}

// logStore logs the store's state changes (state.degraded events): the
// replica falling back to local state, and its resync.
func (s *Server) logStore(ev *events.Event) {
	if ev.Kind != events.StateDegraded {
		return
	}
	if ev.OK {
		s.log.Info("state store answers again: resynced with the fleet", "reason", ev.Reason)
		return
	}
	policy := "local"
	if s.fleet != nil && s.fleet.failClosed {
		policy = "fail_closed"
	}
	reason := ev.Reason
	if rt := s.rt.Load(); rt != nil {
		reason = rt.redact.String(reason)
	}
	s.log.Warn("state store unavailable: following local state until it answers", "error", reason, "on_store_unavailable", policy)
}

// shareHealth tells the fleet of a demotion this replica made.
func (s *Server) shareHealth(ev *events.Event) {
	if s.fleet == nil {
		return
	}
	if d, ok := fleet.ShareDemotion(*ev); ok {
		s.fleet.f.Demoted(d.Key, d.Reason, d.At)
	}
}

// fleetSink is the engine's FleetSink, nil without a fleet.
func (s *Server) fleetSink() policy.FleetSink {
	if s.fleet == nil {
		return nil
	}
	return s.fleet.f
}

// FleetView says whose view /admin/state shows: this replica's, and
// whether it follows the fleet's store right now.
type FleetView struct {
	Backend string `json:"backend"`
	// Shared is true while the breakers follow the store.
	Shared bool      `json:"shared"`
	At     time.Time `json:"at"`
	// SharedAt is when the replica last synced its retry budgets and
	// client limits with the store.
	SharedAt time.Time `json:"shared_at,omitzero"`
}

func (s *Server) fleetView() FleetView {
	v := FleetView{Backend: "memory", At: time.Now()}
	if s.fleet != nil {
		v.Backend = "redis"
		v.Shared = s.rt.Load().engine.Shared()
		v.SharedAt = s.fleet.f.SharedAt()
	}
	return v
}
