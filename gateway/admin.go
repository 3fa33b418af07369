package gateway

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/evals/probe"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/internal/buildinfo"
	"github.com/brownout-dev/brownout/llm/sse"
)

// State is what GET /admin/state returns.
type State struct {
	// ConfigVersion identifies the configuration in effect (a hash of it);
	// ConfigSeq counts loads since start; LoadedAt is when it took effect.
	// Build is the running binary's version: its module version, or the
	// commit it was built from ("+dirty" for a modified tree).
	Build         string    `json:"build"`
	ConfigVersion string    `json:"config_version"`
	ConfigSeq     uint64    `json:"config_seq"`
	LoadedAt      time.Time `json:"loaded_at"`
	// Policy is the decision core's state: breakers, health, retry budgets.
	Policy policy.State `json:"policy"`
	// Alerts firing now.
	Alerts []alerts.Alert `json:"alerts"`
	// CacheEntries is the number of cached answers.
	CacheEntries int `json:"cache_entries"`
	// EventsDropped counts events slow /admin/events subscribers lost.
	EventsDropped uint64 `json:"events_dropped"`
	// Fleet says whose view this is: this replica's, following the fleet's
	// store or not.
	Fleet FleetView `json:"fleet"`
	// Probes is the active-probe state per target (empty when disabled).
	Probes []probe.TargetState `json:"probes,omitempty"`
}

// State returns a snapshot of the gateway's state.
func (s *Server) State() State {
	rt := s.rt.Load()
	return State{
		Build: buildinfo.Version(), ConfigVersion: rt.version, ConfigSeq: rt.seq, LoadedAt: rt.loadedAt,
		Policy: rt.engine.State(), Alerts: s.al.firing(),
		CacheEntries: s.cache.len(), EventsDropped: s.bus.Dropped(),
		Probes: s.pr.state(), Fleet: s.fleetView(),
	}
}

// admin protects an admin endpoint with the configured token
// ("Authorization: Bearer TOKEN"), compared in constant time.
func (s *Server) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if tok := s.rt.Load().adminToken; tok != nil && !bearerIs(r, tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brownout admin"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "admin token required"})
			return
		}
		h(w, r)
	}
}

// bearerIs reports whether r carries "Authorization: Bearer TOKEN" with
// token tok, compared in constant time.
func bearerIs(r *http.Request, tok []byte) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), tok) == 1
}

func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.State())
}

// serveEvents streams the event log as server-sent events: one `event:
// KIND` with the event's JSON per event, from the moment of subscription,
// with a comment every 15s to keep proxies from timing the stream out.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	ch, cancel := s.bus.Subscribe(4096)
	defer cancel()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := sse.NewWriter(w)
	_ = sw.Comment("brownout events")
	_ = rc.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		case <-keep.C:
			if sw.Comment("keep-alive") != nil || rc.Flush() != nil {
				return
			}
		case ev, ok := <-ch:
			if !ok {
				return
			}
			b, err := json.Marshal(ev)
			if err != nil {
				continue
			}
			if sw.Event(string(ev.Kind), b) != nil {
				return
			}
			// Drain what is already queued before flushing once.
			for n := len(ch); n > 0; n-- {
				ev = <-ch
				if b, err = json.Marshal(ev); err == nil {
					_ = sw.Event(string(ev.Kind), b)
				}
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}

func (s *Server) serveReload(w http.ResponseWriter, r *http.Request) {
	if err := s.ReloadFile(); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"config_version": s.rt.Load().version})
}
