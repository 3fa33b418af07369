package gateway

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/gateway/clients"
	"github.com/brownout-dev/brownout/yamlfile"
)

// ClientConfig is one client key (`clients:`). With at least one client the
// gateway requires a key on every inference request, presented as each
// API's SDKs do: "Authorization: Bearer KEY", "x-api-key: KEY" or
// "x-goog-api-key: KEY", or "?key=KEY" on the Gemini API; without any it is
// open.
type ClientConfig struct {
	// ID names the client in events, usage records and metrics (never the
	// key): letters, digits, '.', '_' and '-', at most 64.
	ID string `yaml:"id"`
	// Key is the client's key, usually "${ENV_VAR}"; at least 16 characters.
	Key Secret `yaml:"key,omitempty"`
	// KeyFile reads the key from a file instead (surrounding whitespace
	// trimmed; relative to the config file's directory).
	KeyFile string `yaml:"key_file,omitempty"`
	// Routes the client may use. Default: every route.
	Routes []string `yaml:"routes,omitempty"`
	// RequestsPerMinute and TokensPerMinute (metered input and output
	// tokens of every attempt) limit the client. Default 0: no limit.
	RequestsPerMinute int `yaml:"requests_per_minute,omitempty"`
	TokensPerMinute   int `yaml:"tokens_per_minute,omitempty"`
	// Budget is the spend allowed per BudgetPeriod, in US dollars priced
	// from the targets' pricing table. Default 0: no budget.
	Budget float64 `yaml:"budget,omitempty"`
	// BudgetPeriod is the budget's window, aligned to the Unix epoch (24h
	// is the UTC day). Default 24h.
	BudgetPeriod yamlfile.Duration `yaml:"budget_period,omitempty"`
	// MaxConcurrent bounds the client's requests in flight. Default 0: no
	// cap beyond limits.max_concurrent_requests.
	MaxConcurrent int `yaml:"max_concurrent,omitempty"`
}

// LimitsConfig bounds what one request (and all of them together) may cost
// the gateway. Every field's zero value stands for the default given.
type LimitsConfig struct {
	// MaxBodyBytes bounds a request body (413 beyond). Default 8 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes,omitempty"`
	// MaxMessages bounds the messages of one request (400 beyond).
	// Default 2048.
	MaxMessages int `yaml:"max_messages,omitempty"`
	// MaxDecodedBytes bounds the memory a request's decoded form may take,
	// estimated from its body before decoding (413 beyond). Default 64 MiB.
	MaxDecodedBytes int64 `yaml:"max_decoded_bytes,omitempty"`
	// MaxHeaderBytes bounds the request line and headers (431 beyond).
	// Default 64 KiB.
	MaxHeaderBytes int `yaml:"max_header_bytes,omitempty"`
	// ReadHeaderTimeout bounds reading the headers. Default 10s.
	ReadHeaderTimeout yamlfile.Duration `yaml:"read_header_timeout,omitempty"`
	// ReadBodyTimeout bounds reading the whole body (408 beyond): a body
	// sent a byte a second holds a connection no longer. Default 30s.
	ReadBodyTimeout yamlfile.Duration `yaml:"read_body_timeout,omitempty"`
	// MaxConcurrentRequests bounds inference requests in flight (503 with
	// Retry-After beyond). Default 1024.
	MaxConcurrentRequests int `yaml:"max_concurrent_requests,omitempty"`
	// MaxConcurrentStreams bounds streamed requests in flight (503 with
	// Retry-After beyond). Default 512.
	MaxConcurrentStreams int `yaml:"max_concurrent_streams,omitempty"`
	// MaxInflightBytes is the memory every inference request in flight
	// may hold together: bodies, their decoded forms (estimated from the
	// body before decoding), a stream's fixed buffers, and what upstream
	// answers make requests hold, counted as it arrives (answers, a
	// stream's event buffers). A request takes its share before its body
	// is read; beyond the budget it is refused with 503 and Retry-After. Default: a quarter of the memory the process
	// may use (the cgroup's limit, GOMEMLIMIT or the machine's memory; at
	// least 256 MiB).
	MaxInflightBytes int64 `yaml:"max_inflight_bytes,omitempty"`
	// ReserveOutputTokens is the output a request of a client with a
	// budget or tokens per minute is assumed to produce when it sets no
	// max_tokens: its worst case is reserved at admission, and the gateway
	// caps the request's output there (a request's own max_tokens is
	// reserved as it is). Default 4096.
	ReserveOutputTokens int `yaml:"reserve_output_tokens,omitempty"`
}

// Limit defaults (see LimitsConfig).
const (
	DefaultMaxBodyBytes          = 8 << 20
	DefaultMaxMessages           = 2048
	DefaultMaxDecodedBytes       = 64 << 20
	DefaultMaxHeaderBytes        = 64 << 10
	DefaultReadHeaderTimeout     = 10 * time.Second
	DefaultReadBodyTimeout       = 30 * time.Second
	DefaultMaxConcurrentRequests = 1024
	DefaultMaxConcurrentStreams  = 512
	DefaultReserveOutputTokens   = 4096
)

func (l *LimitsConfig) maxBodyBytes() int64    { return or(l.MaxBodyBytes, DefaultMaxBodyBytes) }
func (l *LimitsConfig) maxMessages() int       { return or(l.MaxMessages, DefaultMaxMessages) }
func (l *LimitsConfig) maxDecodedBytes() int64 { return or(l.MaxDecodedBytes, DefaultMaxDecodedBytes) }
func (l *LimitsConfig) maxHeaderBytes() int    { return or(l.MaxHeaderBytes, DefaultMaxHeaderBytes) }
func (l *LimitsConfig) readHeaderTimeout() time.Duration {
	return or(l.ReadHeaderTimeout.D(), DefaultReadHeaderTimeout)
}
func (l *LimitsConfig) readBodyTimeout() time.Duration {
	return or(l.ReadBodyTimeout.D(), DefaultReadBodyTimeout)
}
func (l *LimitsConfig) maxConcurrentRequests() int {
	return or(l.MaxConcurrentRequests, DefaultMaxConcurrentRequests)
}
func (l *LimitsConfig) maxConcurrentStreams() int {
	return or(l.MaxConcurrentStreams, DefaultMaxConcurrentStreams)
}
func (l *LimitsConfig) maxInflightBytes() int64 {
	if l.MaxInflightBytes > 0 {
		return l.MaxInflightBytes
	}
	return DefaultInflightBytes()
}
func (l *LimitsConfig) reserveOutputTokens() int {
	return or(l.ReserveOutputTokens, DefaultReserveOutputTokens)
}

// minClientKey is the shortest client key accepted.
const minClientKey = 16

var clientID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// validateTrust checks clients:, limits: and the admin and usage options
// of the trust boundary, and resolves the client keys.
func (c *Config) validateTrust(add func(path, format string, args ...any), lookup func(string) (string, bool)) {
	if c.Admin.Token.template != "" && c.Admin.Token.resolved && strings.TrimSpace(c.Admin.Token.Value()) == "" {
		add("admin.token", "is blank (an unset or empty variable, or only whitespace?): a blank token would leave the admin API open; remove admin.token to run without one")
	}
	if c.Admin.ProtectMetrics && c.Admin.Token.IsZero() {
		add("admin.protect_metrics", "needs admin.token")
	}
	if c.Usage.RotateBytes < 0 {
		add("usage.rotate_bytes", "must not be negative")
	}
	if c.Usage.RotateEvery.D() < 0 {
		add("usage.rotate_every", "must not be negative")
	}

	l := &c.Limits
	for _, f := range []struct {
		path string
		v    int64
	}{{"max_body_bytes", l.MaxBodyBytes}, {"max_messages", int64(l.MaxMessages)}, {"max_decoded_bytes", l.MaxDecodedBytes},
		{"max_header_bytes", int64(l.MaxHeaderBytes)}, {"read_header_timeout", int64(l.ReadHeaderTimeout)},
		{"read_body_timeout", int64(l.ReadBodyTimeout)}, {"max_concurrent_requests", int64(l.MaxConcurrentRequests)},
		{"max_concurrent_streams", int64(l.MaxConcurrentStreams)}, {"reserve_output_tokens", int64(l.ReserveOutputTokens)},
		{"max_inflight_bytes", l.MaxInflightBytes}} {
		if f.v < 0 {
			add("limits."+f.path, "must not be negative")
		}
	}
	if l.MaxDecodedBytes > 0 && l.MaxDecodedBytes < l.maxBodyBytes() {
		add("limits.max_decoded_bytes", "must be at least limits.max_body_bytes (%d)", l.maxBodyBytes())
	}

	routes := map[string]bool{}
	for _, r := range c.Routes {
		routes[r.Name] = true
	}
	ids := map[string]bool{}
	digests := map[[sha256.Size]byte]string{}
	for i := range c.Clients {
		cl := &c.Clients[i]
		at := fmt.Sprintf("clients.%d", i)
		switch {
		case !clientID.MatchString(cl.ID):
			add(at+".id", "%q must be 1 to 64 letters, digits, '.', '_' or '-'", cl.ID)
		case ids[cl.ID]:
			add(at+".id", "duplicate client %q", cl.ID)
		}
		ids[cl.ID] = true
		switch {
		case cl.Key.IsZero() && cl.KeyFile == "":
			add(at+".key", "a client needs a key (key: ${ENV_VAR} or key_file:)")
		case !cl.Key.IsZero() && cl.KeyFile != "":
			add(at+".key_file", "give key or key_file, not both")
		case cl.KeyFile != "":
			p := cl.KeyFile
			if !filepath.IsAbs(p) && c.file != "" {
				p = filepath.Join(filepath.Dir(c.file), p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				add(at+".key_file", "cannot read the key: %v", err)
				break
			}
			cl.Key = NewSecret(strings.TrimSpace(string(b)))
			cl.Key.template = "" // not written back (MarshalYAML)
		default:
			if err := cl.Key.resolve(lookup); err != nil {
				add(at+".key", "%v", err)
			}
		}
		if k := cl.Key.Value(); cl.Key.resolved && len(k) < minClientKey {
			add(at+".key", "a client key must be at least %d characters (got %d)", minClientKey, len(k))
		} else if cl.Key.resolved {
			d := clients.Digest(k)
			if other, dup := digests[d]; dup {
				add(at+".key", "the same key as client %q", other)
			}
			digests[d] = cl.ID
		}
		for j, r := range cl.Routes {
			if !routes[r] {
				add(fmt.Sprintf("%s.routes.%d", at, j), "unknown route %q (not in routes)", r)
			}
		}
		for _, f := range []struct {
			path string
			neg  bool
		}{{"requests_per_minute", cl.RequestsPerMinute < 0}, {"tokens_per_minute", cl.TokensPerMinute < 0},
			{"budget", cl.Budget < 0}, {"budget_period", cl.BudgetPeriod < 0}, {"max_concurrent", cl.MaxConcurrent < 0}} {
			if f.neg {
				add(at+"."+f.path, "must not be negative")
			}
		}
	}
}

// clientTable builds the accounting of cfg's clients, keeping the counters
// of old's clients with the same ID. Only the keys' digests are kept.
func clientTable(cfg *Config, old *clients.Table) (*clients.Table, error) {
	cs := make([]clients.Client, len(cfg.Clients))
	for i, c := range cfg.Clients {
		cs[i] = clients.Client{ID: c.ID, Digest: clients.Digest(c.Key.Value()), Limits: clients.Limits{
			Routes: c.Routes, RequestsPerMinute: c.RequestsPerMinute, TokensPerMinute: c.TokensPerMinute,
			Budget: c.Budget, BudgetPeriod: c.BudgetPeriod.D(), MaxConcurrent: c.MaxConcurrent,
		}}
	}
	return old.Reload(cs)
}
