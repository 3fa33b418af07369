package scenarios

import (
	"time"

	"github.com/brownout-dev/brownout/yamlfile"
)

// A game day may run the gateway as a fleet: gateway.replicas replicas
// behind the runner's round-robin balancer, each with its own decision
// core, keeping their breakers apart (state: memory) or sharing them
// through a store (state: redis). Store steps take that store down or make
// it slow. See simfleet.go for the simulator's model of the store and
// livefleet.go for the live engine's replicas and redis-server.

const (
	// maxReplicas bounds gateway.replicas: each live replica is a gateway
	// with its own listener and connection pools.
	maxReplicas = 64
	// defaultPropagation is the simulated store's default propagation
	// delay (loopback Redis).
	defaultPropagation = time.Millisecond
	// defaultStoreTimeout is the gateway's default state.timeout.
	defaultStoreTimeout = 100 * time.Millisecond
	// storeRetry is how often a replica that fell back to local state
	// tries the store again (the fleet package's default Options.Retry).
	storeRetry = time.Second
)

// validateFleet checks gateway.replicas, state and propagation, and
// defaults them.
func (s *Scenario) validateFleet(add func(path, format string, args ...any)) {
	g := &s.Gateway
	switch {
	case g.Replicas < 0 || g.Replicas > maxReplicas:
		add("gateway.replicas", "must be from 1 to %d (got %d)", maxReplicas, g.Replicas)
	case g.Replicas == 0:
		g.Replicas = 1
	}
	switch g.State {
	case "":
		g.State = StateMemory
	case StateMemory, StateRedis:
	default:
		add("gateway.state", "must be memory (each replica its own breakers) or redis (shared) (got %q)", g.State)
	}
	if g.URL != "" && (g.Replicas > 1 || g.State == StateRedis) {
		add("gateway", "a black-box gateway is one URL: replicas and state need an in-process gateway (config or routes)")
	}
	switch {
	case g.Propagation < 0:
		add("gateway.propagation", "must not be negative")
	case g.Propagation > 0 && g.State != StateRedis:
		add("gateway.propagation", "is the shared store's delay: set state: redis, or remove it")
	case g.Propagation == 0:
		g.Propagation = yamlfile.Duration(defaultPropagation)
	}
	if s.Expect.Fleet != nil && g.Replicas <= 1 && g.State != StateRedis {
		add("expect.fleet", "fleet bounds need a fleet: set gateway.replicas above 1 or state: redis")
	}
	if s.env.storeTimeout <= 0 {
		s.env.storeTimeout = defaultStoreTimeout
	}
}

// validateStoreStep checks a store step: it needs a shared store, names
// no target, and is down or slow, not both.
func (s *Scenario) validateStoreStep(st *Step, p string, add func(path, format string, args ...any)) {
	if s.Gateway.State != StateRedis {
		add(p+".store", "a store step needs gateway.state: redis (the replicas' shared store)")
	}
	if st.Target != "" {
		add(p+".target", "a store step faults the fleet's store; remove target")
	}
	switch f := st.Store; {
	case f.Down && f.Slow != 0:
		add(p+".store", "set down or slow, not both")
	case !f.Down && f.Slow <= 0:
		add(p+".store", "write \"down\" or {slow: 200ms} with a positive delay")
	}
	// Two store steps at once would leave what the store is ambiguous.
	for i := range s.Timeline {
		o := &s.Timeline[i]
		if o == st {
			break
		}
		if o.Store == nil {
			continue
		}
		for _, a := range s.starts(st) {
			for _, b := range s.starts(o) {
				ra, rb := *st, *o
				ra.At, rb.At = yamlfile.Duration(a), yamlfile.Duration(b)
				if a < s.stepEnd(&rb) && b < s.stepEnd(&ra) {
					add(p+".at", "store step %q overlaps store step %q", st.Name, o.Name)
					return
				}
			}
		}
	}
}
