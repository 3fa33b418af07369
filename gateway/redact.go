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

// internalShapes are what an upstream's error text may say about the
// provider's own systems and the gateway's account there: URLs, the
// organization or project of the gateway's key, the provider's request
// ids. None of it is the client's business.
var internalShapes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)\b(?:https?|wss?)://[^\s"'<>)\]}]+`), "[url]"},
	{regexp.MustCompile(`\b(?:org|proj|project|user|acct)[-_][A-Za-z0-9]{6,}\b`), "[account]"},
	{regexp.MustCompile(`\b(?:req|request|msg|chatcmpl|resp)[-_][A-Za-z0-9]{8,}\b`), "[id]"},
	{regexp.MustCompile(`(?i)\b(request[ _-]?id|trace[ _-]?id|x-request-id)(["']?\s*[:=]?\s*["']?)[A-Za-z0-9_-]{8,}`), "$1$2[id]"},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "[id]"},
	{regexp.MustCompile(`\b[0-9a-f]{24,}\b`), "[id]"},
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

// upstreamText returns s, an upstream's text meant for a client, without
// credentials and without the provider's internals (internalShapes).
func (r *redactor) upstreamText(s string) string {
	s = r.String(s)
	for _, c := range internalShapes {
		s = c.re.ReplaceAllString(s, c.repl)
	}
	return s
}

// Error scrubs an upstream error's free-text fields in place: no
// credentials, no URLs, account or request ids of the provider.
func (r *redactor) Error(e *llm.Error) *llm.Error {
	if e != nil {
		e.Message, e.Code, e.Param = r.upstreamText(e.Message), r.String(e.Code), r.String(e.Param)
	}
	return e
}

// asGatewayError is the error a client sees for a request that failed
// with e: an upstream's refusal of the gateway's own credentials (a 401 or
// 403, an authentication or permission error) is the gateway's fault, a
// 502 server error, never the client's invalid_api_key; anything else is
// e.
func asGatewayError(e *llm.Error) *llm.Error {
	if e == nil {
		return nil
	}
	if e.Status != 401 && e.Status != 403 && e.Type != llm.ErrAuthentication && e.Type != llm.ErrPermission {
		return e
	}
	return &llm.Error{Status: 502, Type: llm.ErrServer, Code: "upstream_credentials",
		Message: "an upstream provider refused the gateway's own credentials; the gateway's operator must fix its configuration (your key is not the problem)"}
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
