package gateway

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/gateway/usage"

	"github.com/brownout-dev/brownout/events"
)

// buildTrust fills rt's trust boundary from its configuration: the client
// table (keeping old's counters), the redactor and the metric label set.
func (s *Server) buildTrust(rt *runtime, old *runtime) error {
	if len(rt.cfg.Clients) > 0 {
		t, err := clientTable(rt.cfg, old.clientsOrNil())
		if err != nil {
			return err
		}
		rt.clients = t
	}
	rt.redact = newRedactor(rt.cfg)
	rt.labels = newLabelSet(rt.cfg)
	return nil
}

func (rt *runtime) clientsOrNil() *clients.Table {
	if rt == nil {
		return nil
	}
	return rt.clients
}

// charge books an attempt's tokens and cost to its client.
func (s *Server) charge(ev *events.Event) {
	if a := s.rt.Load().clients.Get(ev.Client); a != nil {
		a.Charge(ev.Time, ev.InputTokens+ev.OutputTokens, ev.Cost)
	}
}

// warnExposure warns, loudly, when the gateway listens beyond loopback
// without client keys: anyone who reaches the port spends the provider keys.
func (s *Server) warnExposure(addr net.Addr) {
	rt := s.rt.Load()
	if rt.clients.Len() > 0 || isLoopback(addr) {
		return
	}
	s.log.Warn("OPEN GATEWAY: listening beyond loopback without client keys; anyone who reaches this address spends your provider keys. Add clients: to the config (or listen on 127.0.0.1).",
		"addr", addr.String())
	if rt.adminToken == nil {
		s.log.Warn("OPEN ADMIN API: listening beyond loopback without admin.token; anyone who reaches this address can read state and reload the configuration.",
			"addr", addr.String())
	}
}

// isLoopback reports whether addr is a loopback address (a unix socket
// counts: it is not reachable from the network).
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.Network() == "unix"
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	return ok && ip.Unmap().IsLoopback()
}

// labelSet is the label values metrics may carry: the configured routes,
// targets and clients. Anything else (a client-chosen model name) is
// "unknown", so no request can grow the number of series.
type labelSet struct {
	routes, targets, clients map[string]bool
	// genai is gen_ai.provider.name by configured provider name.
	genai map[string]string
}

// labelUnknown stands for a label value that is not configured.
const labelUnknown = "unknown"

func newLabelSet(cfg *Config) *labelSet {
	l := &labelSet{routes: map[string]bool{}, targets: map[string]bool{}, clients: map[string]bool{}}
	for i := range cfg.Routes {
		r := &cfg.Routes[i]
		l.routes[r.Name] = true
		for j := range r.Targets {
			l.targets[r.Targets[j].Key()] = true
		}
	}
	for _, c := range cfg.Clients {
		l.clients[c.ID] = true
	}
	l.genai = make(map[string]string, len(cfg.Providers))
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		l.genai[p.Name] = genaiProviderName(p.Kind, p.BaseURL)
	}
	return l
}

// genaiHosts are the OpenAI-compatible APIs the OpenTelemetry GenAI
// semantic conventions name (gen_ai.provider.name), by host.
var genaiHosts = map[string]string{
	"api.groq.com":                      "groq",
	"api.mistral.ai":                    "mistral_ai",
	"api.deepseek.com":                  "deepseek",
	"api.x.ai":                          "x_ai",
	"api.perplexity.ai":                 "perplexity",
	"api.cohere.com":                    "cohere",
	"api.cohere.ai":                     "cohere",
	"api.openai.com":                    "openai",
	"api.anthropic.com":                 "anthropic",
	"generativelanguage.googleapis.com": "gcp.gemini",
}

// genaiProviderName is the semantic conventions' gen_ai.provider.name of a
// provider: its well-known value by kind (openai, anthropic, gcp.gemini,
// azure.ai.openai), by host for an openai_compatible one the conventions
// name (groq, mistral_ai, deepseek, ...), else "openai_compatible" (a
// local model server: the conventions' advice is a custom value, and one
// that says how it is spoken to groups better than a configured name).
func genaiProviderName(kind ProviderKind, baseURL string) string {
	switch kind {
	case KindOpenAI:
		return "openai"
	case KindAnthropic:
		return "anthropic"
	case KindGemini:
		return "gcp.gemini"
	case KindAzure:
		return "azure.ai.openai"
	}
	if u, err := url.Parse(baseURL); err == nil {
		if n, ok := genaiHosts[strings.ToLower(u.Hostname())]; ok {
			return n
		}
	}
	return string(KindOpenAICompatible)
}

// genaiProvider is the gen_ai.provider.name of a configured provider; a
// provider the configuration no longer names is "unknown".
func (l *labelSet) genaiProvider(provider string) string {
	if l == nil {
		return provider
	}
	if n, ok := l.genai[provider]; ok {
		return n
	}
	return labelUnknown
}

func bounded(set map[string]bool, v string) string {
	if set[v] {
		return v
	}
	if v == "" {
		return v
	}
	return labelUnknown
}

func (l *labelSet) route(v string) string {
	if l == nil {
		return v
	}
	return bounded(l.routes, v)
}

func (l *labelSet) target(v string) string {
	if l == nil {
		return v
	}
	return bounded(l.targets, v)
}

func (l *labelSet) client(v string) string {
	if l == nil || v == clientAnonymous || v == clientUnknown {
		return v
	}
	return bounded(l.clients, v)
}

// rejected counts an inbound request by client and result (reason ""
// is an admitted request).
func (m *metrics) rejected(client, reason string) {
	if reason == "" {
		reason = "admitted"
	}
	m.inbound.WithLabelValues(client, reason).Inc()
}

// rotateUsage applies the configured rotation to the usage file and
// rotates it when it is due by age (by size, it rotates as it is written).
// An error is kept by the writer and logged by the next flush.
func (s *Server) rotateUsage(now time.Time) {
	w := s.usage.Load()
	if w == nil {
		return
	}
	u := &s.rt.Load().cfg.Usage
	w.SetRotation(usage.Rotation{MaxBytes: u.RotateBytes, MaxAge: u.RotateEvery.D()})
	_ = w.Rotate(now)
}
