package scenarios

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/internal/netfault"
	"github.com/brownout-dev/brownout/internal/redisserver"
	"github.com/brownout-dev/brownout/yamlfile"
)

// ErrNoRedis is returned (with ErrInvalid) by a live run of a game day
// with gateway.state: redis when redis-server is not installed.
var ErrNoRedis = errors.New("gateway.state: redis runs live against a real redis-server, which is not installed (apt-get install redis-server); sim mode needs none")

// replicaSink stamps a replica's number on the events of its gateway.
type replicaSink struct {
	l *liveRun
	n int // 0 for a gateway alone
}

func (r replicaSink) Emit(e events.Event) {
	e.Replica = r.n
	r.l.Emit(e)
}

// startGateways starts the gateway's replicas in-process, each on its own
// loopback listener, and with state: redis a redis-server behind a
// loopback proxy (which store steps take down or slow). The returned
// function stops them all.
func (l *liveRun) startGateways(ctx context.Context, seed uint64) (func(), error) {
	s := l.s
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if s.Gateway.shared() {
		rs, err := redisserver.Start()
		if errors.Is(err, redisserver.ErrNotInstalled) {
			return nil, invalid(ErrNoRedis) // the run cannot happen as asked (exit 2)
		}
		if err != nil {
			return nil, err
		}
		stops = append(stops, rs.Stop)
		px, err := netfault.Start(rs.Addr())
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, px.Close)
		l.storeProxy = px
	}
	n := max(s.Gateway.Replicas, 1)
	for i := range n {
		cfg, err := l.replicaConfig(l.gwConfig, seed)
		if err != nil {
			stopAll()
			return nil, err
		}
		sink := replicaSink{l: l}
		if n > 1 {
			sink.n = i + 1
		}
		gopts := gateway.Options{Events: sink, Logger: slog.New(slog.DiscardHandler), TracerProvider: l.traces.provider()}
		if l.blackBox {
			gopts.Events = nil // a bake-off scores brownout's gateway as any other
		}
		srv, err := gateway.New(cfg, gopts)
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("%w: gateway: %w", ErrInvalid, err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = srv.Close()
			stopAll()
			return nil, err
		}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { _ = srv.Serve(sctx, ln); close(done) }()
		stops = append(stops, func() { cancel(); <-done; _ = srv.Close() })
		l.replicas = append(l.replicas, srv)
		l.replicaURLs = append(l.replicaURLs, "http://"+ln.Addr().String())
	}
	l.srv, l.gwURL = l.replicas[0], l.replicaURLs[0]
	return stopAll, nil
}

// replicaConfig is a replica's gateway config: the file, pointed at the
// in-process mocks and sinks, with the game day's state store.
func (l *liveRun) replicaConfig(path string, seed uint64) (*gateway.Config, error) {
	cfg, err := l.gatewayConfig(path, seed)
	if err != nil {
		return nil, err
	}
	// No load balancer watches the run's own gateway: it stops without
	// a lame-duck period.
	cfg.Shutdown.LameDuck = new(yamlfile.Duration)
	cfg.State = gateway.StateConfig{Timeout: cfg.State.Timeout}
	if l.storeProxy != nil {
		cfg.State.Backend = StateRedis
		cfg.State.URL = gateway.NewSecret("redis://" + l.storeProxy.Addr() + "/0")
		cfg.State.Prefix = "gameday"
	}
	return cfg, nil
}

// replicaURL is the gateway replica that serves user request id ("req-n"):
// round robin by request number, as in the simulator.
func (l *liveRun) replicaURL(id string) string {
	if len(l.replicaURLs) <= 1 {
		return l.gwURL
	}
	n, err := strconv.Atoi(strings.TrimPrefix(id, "req-"))
	if err != nil || n < 1 {
		return l.gwURL
	}
	return l.replicaURLs[(n-1)%len(l.replicaURLs)]
}

// reloadReplicas reloads every replica with the config file at path.
func (l *liveRun) reloadReplicas(path string) error {
	for _, srv := range l.replicas {
		cfg, err := l.replicaConfig(path, l.s.Seed)
		if err == nil {
			err = srv.Reload(cfg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// storeStep starts (on) or ends a store step.
func (l *liveRun) storeStep(st *Step, on bool) {
	px := l.storeProxy
	if px == nil {
		return
	}
	switch {
	case st.Store.Down:
		px.SetDown(on)
	case on:
		px.SetSlow(st.Store.Slow.D())
	default:
		px.SetSlow(0)
	}
}
