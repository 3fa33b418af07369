package gateway

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
)

// Reload swaps in a new, validated configuration. Requests in flight finish
// on the configuration they started with; new requests use cfg. When the
// routes and policy are unchanged the decision core is kept, with its
// breaker, health and budget state; otherwise a new core takes over the
// breaker and health state of every target both configurations use (an open
// breaker stays open), and retry budgets start afresh.
// (listen, shutdown, cache, idempotency and tracing settings take effect at
// the next start; the cache and the idempotency store survive reloads.)
func (s *Server) Reload(cfg *Config) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.rt.Load()
	rt, err := s.build(cfg, old)
	if err != nil {
		s.rejected(err)
		return err
	}
	if err := s.swapUsage(rt.usagePath, old.usagePath); err != nil {
		s.rejected(err)
		return err
	}
	s.rt.Store(rt)
	s.al.configure(cfg)
	s.pr.configure(time.Now(), cfg)
	reason := lifecycle.ReloadReason(rt.engine == old.engine)
	s.emit(events.Event{Time: time.Now(), Kind: events.ConfigReload, OK: true, Name: rt.version, Reason: reason})
	s.log.Info("configuration reloaded", "version", rt.version, "policy_state", strings.TrimPrefix(reason, "policy state "))
	s.warnUnqualified(cfg)
	return nil
}

func (s *Server) rejected(err error) {
	s.emit(events.Event{Time: time.Now(), Kind: events.ConfigReload, OK: false, Reason: err.Error()})
	s.log.Error("configuration rejected; the previous one keeps serving", "err", err)
}

// ReloadFile reloads Options.ConfigPath. An invalid file is rejected (a
// config.reload event with OK false, and a log line) and the running
// configuration keeps serving.
func (s *Server) ReloadFile() error {
	if s.opts.ConfigPath == "" {
		return fmt.Errorf("gateway: no configuration file to reload")
	}
	cfg, err := LoadConfig(s.opts.ConfigPath, LoadOptions{LookupEnv: s.opts.LookupEnv})
	if err != nil {
		s.rejected(err)
		return err
	}
	return s.Reload(cfg)
}

// Watch reloads the configuration file when its modification time or size
// changes (polled every reload.poll; applied once the file has been stable
// for one poll, so a half-written file is not read) and whenever a value
// arrives on hup (wire it to SIGHUP), until ctx is done.
func (s *Server) Watch(ctx context.Context, hup <-chan os.Signal) {
	cfg := s.rt.Load().cfg
	poll := or(cfg.Reload.Poll.D(), 2*time.Second)
	var tick <-chan time.Time
	if s.opts.ConfigPath != "" && !cfg.Reload.Disable && poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	stamp := func() (time.Time, int64) {
		fi, err := os.Stat(s.opts.ConfigPath)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	mt, size := stamp()
	// A change is applied once the file has stopped changing for one poll,
	// so a file caught mid-write (truncated, half written) is not loaded.
	var pendM time.Time
	pendS := int64(-2)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			mt, size = stamp()
			pendS = -2
			_ = s.ReloadFile()
		case <-tick:
			m, sz := stamp()
			switch {
			case sz < 0 || (m.Equal(mt) && sz == size):
				pendS = -2
			case pendS != -2 && m.Equal(pendM) && sz == pendS:
				mt, size, pendS = m, sz, -2
				_ = s.ReloadFile()
			default:
				pendM, pendS = m, sz
			}
		}
	}
}
