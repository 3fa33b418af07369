package gateway

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/brownout-dev/brownout/gateway/fleet"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
)

// StateConfig says where the gateway's resilience state lives: in this
// process (memory, the default) or shared by a fleet of replicas in Redis.
// Today the breakers are shared (with one fleet-wide half-open trial budget,
// see the fleet package); retry budgets, health, idempotency records, the
// cache and client limits stay per replica. The section is read at start:
// changing it needs a restart (a reload keeps the running store).
type StateConfig struct {
	// Backend is memory or redis. Default memory.
	Backend string `yaml:"backend,omitempty"`
	// URL of the Redis server, redis://[user:password@]host:port/db, usually
	// from the environment (${REDIS_URL}); never logged. Required for redis.
	URL Secret `yaml:"url,omitempty"`
	// Prefix starts every key and channel. Default "brownout".
	Prefix string `yaml:"prefix,omitempty"`
	// OnStoreUnavailable is what a replica does while the store is down or
	// slow: local (the default, and the only policy today) follows its own
	// breakers, emits state.degraded and resyncs when the store is back.
	// No request waits for the store in any case.
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
	case "", "local":
	case "fail_closed":
		add("state.on_store_unavailable", "fail_closed is not supported yet; local is")
	default:
		add("state.on_store_unavailable", "unknown policy %q (local)", c.OnStoreUnavailable)
	}
}

// fleetState is a server's link to its fleet's store.
type fleetState struct {
	f     *fleet.Fleet
	store *fleet.Redis
	stop  context.CancelFunc
	done  chan struct{}
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
	up := prometheus.NewGauge(prometheus.GaugeOpts{Name: "brownout_state_backend_up",
		Help: "1 while the fleet's shared state store answers, 0 while the replica follows local state."})
	up.Set(1)
	s.m.reg.MustRegister(up)
	f := fleet.New(store, func() *policy.Engine { return s.rt.Load().engine }, fleet.Options{
		Timeout: st.Timeout.D(),
		Events:  (*serverSink)(s),
		Up: func(ok bool) {
			if ok {
				up.Set(1)
			} else {
				up.Set(0)
			}
		},
	})
	s.fleet = &fleetState{f: f, store: store, done: make(chan struct{})}
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
}

func (s *Server) fleetView() FleetView {
	v := FleetView{Backend: "memory", At: time.Now()}
	if s.fleet != nil {
		v.Backend = "redis"
		v.Shared = s.rt.Load().engine.Shared()
	}
	return v
}
