package gateway

import (
	"cmp"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/brownout-dev/brownout/llm"
)

// redactor scrubs credentials from text that came from an upstream (error
// messages, in-band stream errors) before it reaches a client, an event or
// a log line: the configured secrets (provider keys and headers, client
// keys, the admin token) wherever they appear, and anything shaped like a
// credential (a bearer token, sk-/key-/AIza-prefixed keys, "api_key=...").
type redactor struct {
	secrets []string // longest first, so a key containing another goes whole
}

// minRedactLen: configured values shorter than this are not scrubbed (a
// header value "1" would blank every digit).
const minRedactLen = 6

var credentialShapes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}`), "$1 " + Redacted},
	{regexp.MustCompile(`\b(?:sk|rk|pk|key)-[A-Za-z0-9_-]{6,}`), Redacted},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{20,}`), Redacted},
	{regexp.MustCompile(`(?i)\b((?:x-)?api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password)(["']?\s*[:=]\s*["']?)[^\s"',;&}]{6,}`), "$1$2" + Redacted},
}

// newRedactor returns a redactor for cfg's secrets.
func newRedactor(cfg *Config) *redactor {
	r := &redactor{}
	add := func(s Secret) {
		if v := s.Value(); len(v) >= minRedactLen && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
	add(cfg.Admin.Token)
	for i := range cfg.Providers {
		add(cfg.Providers[i].APIKey)
		for _, v := range cfg.Providers[i].Headers {
			add(v)
		}
	}
	for i := range cfg.Clients {
		add(cfg.Clients[i].Key)
	}
	for _, v := range cfg.Tracing.Headers {
		add(v)
	}
	for i := range cfg.Alerts.Sinks {
		add(cfg.Alerts.Sinks[i].URL)
		for _, v := range cfg.Alerts.Sinks[i].Headers {
			add(v)
		}
	}
	slices.SortFunc(r.secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return r
}

// String returns s without credentials.
func (r *redactor) String(s string) string {
	if s == "" {
		return s
	}
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	for _, c := range credentialShapes {
		s = c.re.ReplaceAllString(s, c.repl)
	}
	return s
}

// Error scrubs an upstream error's free-text fields in place.
func (r *redactor) Error(e *llm.Error) *llm.Error {
	if e != nil {
		e.Message, e.Code, e.Param = r.String(e.Message), r.String(e.Code), r.String(e.Param)
	}
	return e
}

// codec wraps an upstream's codec: the errors it decodes (a non-2xx answer,
// an in-band stream error) come out redacted.
func (r *redactor) codec(c llm.Codec) llm.Codec { return redactingCodec{Codec: c, r: r} }

type redactingCodec struct {
	llm.Codec
	r *redactor
}

func (c redactingCodec) DecodeError(status int, h llm.Header, body []byte) *llm.Error {
	return c.r.Error(c.Codec.DecodeError(status, h, body))
}

func (c redactingCodec) NewStreamDecoder(rd io.Reader) llm.StreamDecoder {
	return redactingDecoder{StreamDecoder: c.Codec.NewStreamDecoder(rd), r: c.r}
}

type redactingDecoder struct {
	llm.StreamDecoder
	r *redactor
}

func (d redactingDecoder) Next() (llm.StreamEvent, error) {
	ev, err := d.StreamDecoder.Next()
	if ev.Type == llm.EventError {
		d.r.Error(ev.Err)
	}
	return ev, err
}
