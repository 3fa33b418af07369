package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/llm/gemini"
)

// ProviderKind is the API a provider speaks.
type ProviderKind string

// Provider kinds.
const (
	KindOpenAI           ProviderKind = "openai"
	KindAnthropic        ProviderKind = "anthropic"
	KindGemini           ProviderKind = "gemini"
	KindAzure            ProviderKind = "azure"             // Azure OpenAI: deployments, api-version, api-key header
	KindOpenAICompatible ProviderKind = "openai_compatible" // any base URL speaking /chat/completions
)

// Protocol selects the HTTP versions used to reach a provider.
type Protocol string

// Protocols.
const (
	ProtocolAuto  Protocol = ""      // HTTP/1.1, or HTTP/2 when TLS negotiates it
	ProtocolHTTP1 Protocol = "http1" // HTTP/1.1 only
	ProtocolH2C   Protocol = "h2c"   // HTTP/2 over cleartext with prior knowledge
)

// Provider is one upstream API account (an entry of `providers:`).
type Provider struct {
	// Name is what targets refer to ("openai" in "openai:gpt-4o").
	Name string       `yaml:"name"`
	Kind ProviderKind `yaml:"kind"`
	// BaseURL defaults per kind: https://api.openai.com/v1,
	// https://api.anthropic.com, https://generativelanguage.googleapis.com.
	// For openai and openai_compatible it includes the version path ("/v1");
	// for azure it is the resource endpoint (https://NAME.openai.azure.com).
	BaseURL string `yaml:"base_url,omitempty"`
	APIKey  Secret `yaml:"api_key,omitempty"`
	// APIVersion is Azure's api-version query parameter, or the
	// anthropic-version header for anthropic (default 2023-06-01).
	APIVersion string            `yaml:"api_version,omitempty"`
	Headers    map[string]Secret `yaml:"headers,omitempty"`
	Protocol   Protocol          `yaml:"protocol,omitempty"`
	// NoStreamUsage stops asking OpenAI-style providers for a usage chunk at
	// the end of streams (stream_options.include_usage), for compatible
	// servers that reject it; streamed usage is then estimated. Default
	// false.
	NoStreamUsage bool `yaml:"no_stream_usage,omitempty"`
}

// format is the wire format a provider of kind k speaks: Azure and
// compatible servers speak OpenAI's.
func (k ProviderKind) format() *codecs.Format {
	f, err := codecs.Lookup(llm.Format(k))
	if err != nil {
		f, _ = codecs.Lookup(llm.FormatOpenAI)
	}
	return f
}

func defaultBaseURL(k ProviderKind) string {
	switch k {
	case KindOpenAI:
		return "https://api.openai.com/v1"
	case KindAnthropic:
		return "https://api.anthropic.com"
	case KindGemini:
		return "https://generativelanguage.googleapis.com"
	}
	return ""
}

// upstream is a ready client for one provider.
type upstream struct {
	name       string
	kind       ProviderKind
	codec      llm.Codec
	authHeader string // the header carrying key, after authPrefix
	authPrefix string
	base       string // without trailing slash
	key        string
	apiVersion string
	headers    [][2]string
	client     *http.Client
	// streamUsage asks for the usage chunk of streams.
	streamUsage bool
}

func newUpstream(p *Provider, tr http.RoundTripper) *upstream {
	base := p.BaseURL
	if base == "" {
		base = defaultBaseURL(p.Kind)
	}
	f := p.Kind.format()
	u := &upstream{
		name:       p.Name,
		kind:       p.Kind,
		codec:      f.Codec,
		authHeader: f.AuthHeader,
		authPrefix: f.AuthPrefix,
		base:       strings.TrimRight(base, "/"),
		key:        p.APIKey.Value(),
		apiVersion: p.APIVersion,
		client:     &http.Client{Transport: tr, CheckRedirect: noRedirect},

		streamUsage: !p.NoStreamUsage,
	}
	if u.kind == KindAzure {
		u.authHeader, u.authPrefix = "Api-Key", ""
	}
	if u.kind == KindAnthropic && u.apiVersion == "" {
		u.apiVersion = "2023-06-01"
	}
	for k, v := range p.Headers {
		u.headers = append(u.headers, [2]string{http.CanonicalHeaderKey(k), v.Value()})
	}
	return u
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func (u *upstream) url(model string, stream bool) string {
	switch u.kind {
	case KindAnthropic:
		return u.base + "/v1/messages"
	case KindGemini:
		return u.base + gemini.Path(model, stream)
	case KindAzure:
		return u.base + "/openai/deployments/" + url.PathEscape(model) + "/chat/completions?api-version=" + url.QueryEscape(u.apiVersion)
	default:
		return u.base + "/chat/completions"
	}
}

// newRequest encodes req (whose Model is already the target's model) for
// this provider.
func (u *upstream) newRequest(ctx context.Context, req *llm.Request, requestID string) (*http.Request, error) {
	body, err := u.codec.EncodeRequest(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url(req.Model, req.Stream), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := hr.Header
	h["Content-Type"] = []string{"application/json"}
	if req.Stream {
		h["Accept"] = []string{"text/event-stream"}
	} else {
		h["Accept"] = []string{"application/json"}
	}
	if requestID != "" {
		h["X-Request-Id"] = []string{requestID}
	}
	if u.key != "" {
		h[u.authHeader] = []string{u.authPrefix + u.key}
	}
	if u.kind == KindAnthropic {
		h["Anthropic-Version"] = []string{u.apiVersion}
	}
	for _, kv := range u.headers {
		h[kv[0]] = []string{kv[1]}
	}
	return hr, nil
}

// connectTimeoutKey carries a per-attempt connect timeout to the dialer.
type connectTimeoutKey struct{}

func withConnectTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, connectTimeoutKey{}, d)
}

// TransportOptions tune the shared upstream transport.
type TransportOptions struct {
	MaxIdleConnsPerHost int           // default 256
	IdleConnTimeout     time.Duration // default 90s
	TLSConfig           *tls.Config   // nil: system roots
}

// transportBufferSize is the read and write buffer of an upstream
// connection.
const transportBufferSize = 1 << 10

// NewTransport returns the pooled transport the gateway uses for providers
// of a protocol: keep-alive pools sized for many concurrent streams, no
// transparent compression (it would buffer streams), HTTP/2 negotiated over
// TLS (or spoken in cleartext for ProtocolH2C), and a connect timeout taken
// per request from the attempt's deadlines.
func NewTransport(p Protocol, o TransportOptions) *http.Transport {
	if o.MaxIdleConnsPerHost == 0 {
		o.MaxIdleConnsPerHost = 256
	}
	if o.IdleConnTimeout == 0 {
		o.IdleConnTimeout = 90 * time.Second
	}
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if t, ok := ctx.Value(connectTimeoutKey{}).(time.Duration); ok {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, t)
				defer cancel()
				c, err := d.DialContext(ctx, network, addr)
				if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return nil, &connectTimeoutError{t}
				}
				return c, err
			}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   o.MaxIdleConnsPerHost,
		IdleConnTimeout:       o.IdleConnTimeout,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		TLSClientConfig:       o.TLSConfig,
		// Small connection buffers: an upstream connection lives as long as
		// its stream, and thousands are held at once. Requests and answers
		// larger than a buffer pass through it (bufio writes and reads
		// large slices directly); the stream reader has its own buffer.
		ReadBufferSize:  transportBufferSize,
		WriteBufferSize: transportBufferSize,
	}
	var protos http.Protocols
	switch p {
	case ProtocolHTTP1:
		protos.SetHTTP1(true)
	case ProtocolH2C:
		protos.SetUnencryptedHTTP2(true)
	default:
		protos.SetHTTP1(true)
		protos.SetHTTP2(true)
		tr.ForceAttemptHTTP2 = true
	}
	tr.Protocols = &protos
	return tr
}

// upstreamTransport is the transport of a server's providers of a protocol.
// Cleartext HTTP/1.1 (http:// with protocols auto and http1) goes through
// h1Transport, which holds a stream without goroutines of its own; TLS
// upstreams, proxied requests and h2c keep NewTransport (real providers
// negotiate HTTP/2 over TLS, where streams share connections).
func upstreamTransport(p Protocol, o TransportOptions) http.RoundTripper {
	tr := NewTransport(p, o)
	if p == ProtocolH2C {
		return tr
	}
	return newH1Transport(o, tr)
}

type connectTimeoutError struct{ d time.Duration }

func (e *connectTimeoutError) Error() string { return fmt.Sprintf("connect timeout after %s", e.d) }

// scrubURL removes the URL from transport errors: a URL may carry a key
// (Gemini ?key=, webhook tokens), and errors end up in logs.
func scrubURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}
