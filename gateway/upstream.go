package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
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
	// tmpl is what every request to the provider starts from when its URL
	// does not name the model (all kinds but Gemini and Azure): the URL
	// parsed and the fixed header fields set once; newRequest clones it
	// (http.Request.Clone copies the URL and the header). nil: each
	// request is built whole.
	tmpl *http.Request
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
	if u.kind != KindGemini && u.kind != KindAzure {
		// A base URL that does not parse fails each request, as before.
		u.tmpl, _ = u.template(context.Background(), "", false)
	}
	return u
}

// template is a request to the provider's URL for model (and stream),
// with the header fields every request carries: content type, key,
// version, the provider's own headers.
func (u *upstream) template(ctx context.Context, model string, stream bool) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url(model, stream), nil)
	if err != nil {
		return nil, err
	}
	h := hr.Header
	h["Content-Type"] = []string{"application/json"}
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

// requestBody is an upstream request's body. It is a type net/http does
// not know to be in memory, so that its Transport writes the request's
// header on its own before the body: a connection that refuses a request
// (quietConn) then refuses it at the header, which net/http takes for
// "nothing written" and resends on another connection; refused within the
// body, the request would fail.
type requestBody struct{ *bytes.Reader }

func (requestBody) Close() error { return nil }

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// protocolError is an upstream answer the gateway cannot take: a final 1xx
// (101 Switching Protocols), a redirect (3xx, never followed), a status
// past 599, or bytes that are not an HTTP answer (a header past the size
// limit, a flood of 1xx answers, garbage). Its connection is closed, never
// reused, and the answer is never forwarded.
type protocolError struct {
	status int   // the upstream's status; 0 when the answer did not parse
	err    error // why it did not parse
}

func (e *protocolError) Error() string {
	if e.err != nil {
		return "upstream protocol error: " + scrubURL(e.err).Error()
	}
	return fmt.Sprintf("upstream protocol error: status %d", e.status)
}

func (e *protocolError) Unwrap() error { return e.err }

// do sends hr. An answer with a status other than 2xx, 4xx and 5xx, or
// bytes that do not parse as an answer, is a *protocolError; the body of
// a returned response is the caller's to close.
func (u *upstream) do(hr *http.Request) (*http.Response, error) {
	resp, err := u.send(hr)
	// What net/http read on a connection before the request was sent on
	// it (see quietConn) is bytes the upstream sent unasked, never this
	// request's answer, and the request was not sent: send it again (on a
	// new connection; that one is closed).
	for try := 0; errors.Is(err, errUnsolicited) && try < 3 && hr.Context().Err() == nil; try++ {
		body, gerr := hr.GetBody()
		if gerr != nil {
			break
		}
		hr = hr.Clone(hr.Context())
		hr.Body = body
		resp, err = u.send(hr)
	}
	if err != nil {
		return nil, err
	}
	if s := resp.StatusCode; s < 200 || (s >= 300 && s < 400) || s >= 600 {
		// Closing an unread body (a 101's is the connection itself) closes
		// the connection: it is not pooled.
		_ = resp.Body.Close()
		return nil, &protocolError{status: s}
	}
	return resp, nil
}

// send is one net/http round trip of hr. Its result is errUnsolicited (in
// a *protocolError) when what it read came on an HTTP/1.1 connection
// before hr was sent on it (see quietConn).
func (u *upstream) send(hr *http.Request) (*http.Response, error) {
	st := new(sendTrace)
	st.trace.GotFirstResponseByte = st.gotFirstResponseByte
	st.trace.GotConn = st.try.gotConn
	resp, err := u.client.Do(hr.WithContext(httptrace.WithClientTrace(hr.Context(), &st.trace)))
	if st.try.unsent() {
		if err == nil {
			_ = resp.Body.Close() // unread: the connection is closed
		}
		return nil, &protocolError{err: errUnsolicited}
	}
	if err != nil {
		if st.answered.Load() && hr.Context().Err() == nil {
			return nil, &protocolError{err: err}
		}
		return nil, err
	}
	return resp, nil
}

// sendTrace is what send follows of one round trip, in one allocation.
type sendTrace struct {
	trace    httptrace.ClientTrace
	try      quietTry
	answered atomic.Bool // set on the transport's goroutine
}

func (t *sendTrace) gotFirstResponseByte() { t.answered.Store(true) }

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
// this provider, on a clone of its template (a request of its own: URL and
// header copied) or, when the URL names the model, a template of its own.
func (u *upstream) newRequest(ctx context.Context, req *llm.Request, requestID string) (*http.Request, error) {
	body, err := u.codec.EncodeRequest(req)
	if err != nil {
		return nil, err
	}
	var hr *http.Request
	if u.tmpl != nil {
		hr = u.tmpl.Clone(ctx)
	} else if hr, err = u.template(ctx, req.Model, req.Stream); err != nil {
		return nil, err
	}
	hr.Body = requestBody{bytes.NewReader(body)}
	hr.ContentLength = int64(len(body))
	hr.GetBody = func() (io.ReadCloser, error) { return requestBody{bytes.NewReader(body)}, nil }
	// The provider's own header fields (in the template) win, as they
	// win over the content type and the key.
	h := hr.Header
	if _, set := h["Accept"]; !set {
		if req.Stream {
			h["Accept"] = []string{"text/event-stream"}
		} else {
			h["Accept"] = []string{"application/json"}
		}
	}
	if _, set := h["X-Request-Id"]; !set && requestID != "" {
		h["X-Request-Id"] = []string{requestID}
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

// TransportOptions tune the shared upstream transport. Each field's
// comment states its default (used at the zero value).
type TransportOptions struct {
	MaxIdleConnsPerHost int           // idle keep-alive connections kept per host:port; default 256
	MaxIdleConns        int           // idle connections kept in all; default 4 × MaxIdleConnsPerHost
	IdleConnTimeout     time.Duration // an idle connection is closed after it; default 90s
	// MaxResponseHeaderBytes bounds an answer's header, informational (1xx)
	// answers included: more is a protocol error. Default 64 KiB.
	MaxResponseHeaderBytes int64
	TLSConfig              *tls.Config // nil: system roots
	// ReuseQuiet is how long an HTTP/1.1 connection must have received
	// nothing since its last answer before it takes another request (see
	// quietConn): bytes an upstream sends after an answer within it close
	// the connection, and never reach another request. Default
	// DefaultReuseQuiet; negative: reuse at once (net/http's own rule).
	ReuseQuiet time.Duration
}

// The read and write buffers of an upstream connection. The read buffer
// bounds what one read from the socket takes in: 4 KiB holds the dozen or
// more chunks a fast upstream sends between two reads, so a stream is read
// (and flushed to its client, see lazyFlush) in about as many system calls
// as a bare ReverseProxy makes (BenchmarkFloor, stream c=1: 1 KiB made
// 1.34× the floor's CPU per request, 4 KiB 1.13×). The write buffer holds
// a request's header; a larger body passes through it.
const (
	transportReadBufferSize  = 4 << 10
	transportWriteBufferSize = 1 << 10
)

// NewTransport returns the pooled net/http transport the gateway uses for
// providers of a protocol: keep-alive pools sized for many concurrent
// streams, no transparent compression (it would buffer streams), HTTP/2
// negotiated over TLS (or spoken in cleartext for ProtocolH2C), and a
// connect timeout taken per request from the attempt's deadlines.
//
// Its limits are part of the gateway's security boundary: an answer's
// header, informational (1xx) answers included, is bounded by
// MaxResponseHeaderBytes; a 101 or any other 1xx final answer closes the
// connection; a connection that receives bytes while no request is in
// flight on it is closed and never reused, and an HTTP/1.1 connection
// takes a new request only after it was quiet for ReuseQuiet since its
// last answer, so that bytes sent after an answer cannot be read as the
// answer to another request.
func NewTransport(p Protocol, o TransportOptions) *Transport {
	if o.MaxIdleConnsPerHost == 0 {
		o.MaxIdleConnsPerHost = 256
	}
	if o.MaxIdleConns == 0 {
		o.MaxIdleConns = 4 * o.MaxIdleConnsPerHost
	}
	if o.IdleConnTimeout == 0 {
		o.IdleConnTimeout = 90 * time.Second
	}
	if o.MaxResponseHeaderBytes == 0 {
		o.MaxResponseHeaderBytes = 64 << 10
	}
	if o.ReuseQuiet == 0 {
		o.ReuseQuiet = DefaultReuseQuiet
	}
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialWithConnectTimeout(d.DialContext),
		MaxIdleConns:           o.MaxIdleConns,
		MaxIdleConnsPerHost:    o.MaxIdleConnsPerHost,
		IdleConnTimeout:        o.IdleConnTimeout,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: o.MaxResponseHeaderBytes,
		DisableCompression:     true,
		TLSClientConfig:        o.TLSConfig,
		// Small connection buffers: an upstream connection lives as long as
		// its stream, and thousands are held at once. Requests and answers
		// larger than a buffer pass through it (bufio writes and reads
		// large slices directly); the stream reader has its own buffer.
		ReadBufferSize:  transportReadBufferSize,
		WriteBufferSize: transportWriteBufferSize,
		// HTTP/2: a connection that has been silent for ReadIdleTimeout is
		// pinged, and closed when the ping is not answered.
		HTTP2: &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}
	var protos http.Protocols
	alpn := []string{"http/1.1"}
	switch p {
	case ProtocolHTTP1:
		protos.SetHTTP1(true)
	case ProtocolH2C:
		protos.SetUnencryptedHTTP2(true)
	default:
		protos.SetHTTP1(true)
		protos.SetHTTP2(true)
		tr.ForceAttemptHTTP2 = true
		alpn = []string{"h2", "http/1.1"}
	}
	tr.Protocols = &protos
	t := &Transport{Transport: tr}
	if o.ReuseQuiet > 0 && p != ProtocolH2C {
		// Cleartext connections speak HTTP/1.1 here, pooled by the
		// gateway (plainTransport); TLS ones are dialed by the gateway,
		// which sees what ALPN chose.
		t.plain = newPlainTransport(tr, o.ReuseQuiet, o.MaxIdleConnsPerHost)
		tr.RegisterProtocol("http", t.plain)
		tr.DialTLSContext = dialWithConnectTimeout(quietDialTLS(d.DialContext, o.TLSConfig, alpn, tr.TLSHandshakeTimeout, o.ReuseQuiet))
	}
	return t
}

// Transport is the gateway's upstream transport: net/http's, with the
// connections to cleartext HTTP/1.1 upstreams pooled under the quiet rule
// (see NewTransport).
type Transport struct {
	*http.Transport
	plain *plainTransport // nil: cleartext connections are net/http's (h2c, or ReuseQuiet < 0)
}

// CloseIdleConnections closes the idle connections of both pools.
func (t *Transport) CloseIdleConnections() {
	t.Transport.CloseIdleConnections()
	if t.plain != nil {
		t.plain.closeIdle()
	}
}

// dialWithConnectTimeout bounds dial by the connect timeout the attempt's
// context carries (withConnectTimeout): running out of it is a
// *connectTimeoutError (a connect_error outcome), not the request's
// cancellation.
func dialWithConnectTimeout(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		t, ok := ctx.Value(connectTimeoutKey{}).(time.Duration)
		if !ok {
			return dial(ctx, network, addr)
		}
		ctx, cancel := context.WithTimeout(ctx, t)
		defer cancel()
		c, err := dial(ctx, network, addr)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &connectTimeoutError{t}
		}
		return c, err
	}
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
