package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
)

// Headers of a brownout gateway: the request's hint pins the target (on
// routes with allow_hints); the response names the target that served.
const (
	HeaderHint   = "X-Brownout-Hint"
	HeaderTarget = "X-Brownout-Target"
)

// ErrWrongTarget is returned when a gateway served an eval request from
// another target than the one pinned (a failover, or hints not allowed on the
// route): the answer says nothing about the target under evaluation.
var ErrWrongTarget = errors.New("gateway served another target")

// AnthropicVersion is the anthropic-version header sent to Anthropic endpoints.
const AnthropicVersion = "2023-06-01"

// maxBody bounds a response body.
const maxBody = 32 << 20

// Endpoint is where and how to send requests.
type Endpoint struct {
	// URL is the base URL: "http://127.0.0.1:8080" (a gateway),
	// "https://api.openai.com/v1", "https://api.anthropic.com". A base
	// without a version path gets "/v1" (OpenAI, Anthropic) or "/v1beta"
	// (Gemini).
	URL    string
	Format llm.Format
	// APIKey is sent as Authorization: Bearer (OpenAI), x-api-key
	// (Anthropic) or x-goog-api-key (Gemini). Empty sends none.
	APIKey string
	// Headers are extra request headers.
	Headers map[string]string
	// Gateway says URL is a brownout gateway: the request's model is the
	// route, and the target is pinned with X-Brownout-Hint. A response served
	// by another target is ErrWrongTarget.
	Gateway bool
}

// Client sends requests to one endpoint. It is safe for concurrent use.
type Client struct {
	ep     Endpoint
	base   *url.URL
	format *codecs.Format
	codec  llm.Codec
	hc     *http.Client
}

// New returns a client for ep; hc nil uses http.DefaultClient.
func New(ep Endpoint, hc *http.Client) (*Client, error) {
	f, err := codecs.Lookup(ep.Format)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(ep.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q: want http(s)://host[:port][/path]", ep.URL)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{ep: ep, base: u, format: f, codec: f.Codec, hc: hc}, nil
}

// ErrStreamCut is returned for a streamed answer that ended without its
// end marker and without a finish reason.
var ErrStreamCut = errors.New("stream cut before it finished")

// Path returns the request path for model under the base URL.
func (c *Client) Path(model string) string {
	return c.path(model, false)
}

func (c *Client) path(model string, stream bool) string {
	base := strings.TrimSuffix(c.base.Path, "/")
	// The format's path starts with its API version ("/v1", "/v1beta"),
	// which a base URL may already end with.
	if strings.HasSuffix(base, "/v1beta") || strings.HasSuffix(base, "/v1") {
		base = base[:strings.LastIndexByte(base, '/')]
	}
	return base + c.format.Path(model, stream)
}

// Send encodes req, posts it and decodes the answer. A non-2xx answer is the
// *llm.Error the codec reads from it (Retry-After included). A request with
// Stream set is sent as a stream and its events accumulated into the
// response: an in-band error is returned as its *llm.Error, a cut stream as
// ErrStreamCut, a malformed event as the decoder's error.
func (c *Client) Send(ctx context.Context, t evals.Target, route string, req *llm.Request) (*llm.Response, error) {
	r := *req
	if r.Stream {
		r.IncludeUsage = true
	}
	if c.ep.Gateway && route != "" {
		r.Model = route
	} else if r.Model == "" {
		r.Model = t.Model
	}
	body, err := c.codec.EncodeRequest(&r)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", c.codec.Format(), err)
	}
	u := *c.base
	p := c.path(r.Model, r.Stream)
	if i := strings.IndexByte(p, '?'); i >= 0 {
		u.RawQuery = p[i+1:]
		p = p[:i]
	}
	u.Path, u.RawPath = p, ""
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if r.Stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	if c.ep.Gateway && t.Provider != "" {
		hreq.Header.Set(HeaderHint, t.String())
	}
	for k, v := range c.ep.Headers {
		hreq.Header.Set(k, v)
	}
	if c.codec.Format() == llm.FormatAnthropic {
		hreq.Header.Set("anthropic-version", AnthropicVersion)
	}
	if c.ep.APIKey != "" {
		hreq.Header.Set(c.format.AuthHeader, c.format.AuthPrefix+c.ep.APIKey)
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", u.Redacted(), unwrapURL(err))
	}
	defer resp.Body.Close()
	if served := resp.Header.Get(HeaderTarget); c.ep.Gateway && served != "" && t.Provider != "" && served != t.String() &&
		resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil, fmt.Errorf("%w: %s instead of %s (does route %q allow hints?)", ErrWrongTarget, served, t, route)
	}
	if r.Stream && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return c.readStream(resp.Body)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read response from %s: %w", u.Redacted(), err)
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("response from %s is larger than %d bytes", u.Redacted(), maxBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.codec.DecodeError(resp.StatusCode, resp.Header, data)
	}
	out, err := c.codec.DecodeResponse(data)
	if err != nil {
		return nil, fmt.Errorf("decode %s response: %w", c.codec.Format(), err)
	}
	return out, nil
}

// readStream decodes a streamed answer into a response.
func (c *Client) readStream(body io.Reader) (*llm.Response, error) {
	dec := c.codec.NewStreamDecoder(io.LimitReader(body, maxBody))
	var acc evals.Accumulator
	for {
		ev, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrStreamCut
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s stream: %w", c.codec.Format(), err)
		}
		acc.Add(ev)
		if e := acc.Err(); e != nil {
			return nil, e
		}
	}
	return acc.Response(), nil
}

// unwrapURL drops *url.Error's own copy of the URL (we print a redacted one).
func unwrapURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// Router sends each request to the client of its target's provider, or to
// Default.
type Router struct {
	Default    *Client
	ByProvider map[string]*Client
}

// Send picks the client and sends.
func (r *Router) Send(ctx context.Context, t evals.Target, route string, req *llm.Request) (*llm.Response, error) {
	c := r.ByProvider[t.Provider]
	if c == nil {
		c = r.Default
	}
	if c == nil {
		return nil, fmt.Errorf("no endpoint for provider %q", t.Provider)
	}
	return c.Send(ctx, t, route, req)
}

// ParseEndpoint reads "PROVIDER=[FORMAT@]URL" (the --endpoint flag): the
// provider whose targets go to URL, in FORMAT (default def).
func ParseEndpoint(spec string, def llm.Format) (provider string, ep Endpoint, err error) {
	provider, rest, ok := strings.Cut(spec, "=")
	if !ok || provider == "" || rest == "" {
		return "", Endpoint{}, fmt.Errorf("endpoint %q: want PROVIDER=[FORMAT@]URL", spec)
	}
	ep.Format = def
	if f, u, ok := strings.Cut(rest, "@"); ok && !strings.Contains(f, "/") {
		ep.Format, rest = llm.Format(f), u
	}
	if _, err := codecs.Lookup(ep.Format); err != nil {
		return "", Endpoint{}, fmt.Errorf("endpoint %q: %w", spec, err)
	}
	ep.URL = rest
	return provider, ep, nil
}
