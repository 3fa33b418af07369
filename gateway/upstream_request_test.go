package gateway

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

// TestNewRequestOwnParts: requests built from an upstream's template are
// what http.NewRequestWithContext makes, and share nothing a holder of one
// could change under another: the URL and the header map are each
// request's own, and changing a header value through Header (Set, Add,
// Del) leaves the other requests' alone.
func TestNewRequestOwnParts(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(t.Context(), ctxKey{}, 1)
	req := func(model string, stream bool) *llm.Request {
		return &llm.Request{Model: model, Stream: stream, MaxTokens: 5, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}}
	}
	for _, p := range []*Provider{
		{Name: "o", Kind: KindOpenAI, BaseURL: "http://up.example:/v1/", APIKey: NewSecret("sk-1"), Headers: map[string]Secret{"openai-organization": NewSecret("org-9")}},
		{Name: "a", Kind: KindAnthropic, BaseURL: "https://user@up.example:8443", APIKey: NewSecret("ant-1")},
		{Name: "g", Kind: KindGemini, BaseURL: "http://up.example", APIKey: NewSecret("gm-1")},
		{Name: "z", Kind: KindAzure, BaseURL: "http://up.example", APIKey: NewSecret("az-1"), APIVersion: "2024-10-21"},
		{Name: "c", Kind: KindOpenAICompatible, BaseURL: "http://up.example/api/v1"},
	} {
		t.Run(p.Name, func(t *testing.T) {
			u := newUpstream(p, http.DefaultTransport)
			for _, stream := range []bool{false, true} {
				r1, err := u.newRequest(ctx, req("m-1", stream), "rid-1")
				require.NoError(t, err)
				r2, err := u.newRequest(ctx, req("m-2", stream), "rid-2")
				require.NoError(t, err)

				// What http.NewRequestWithContext makes of the same URL and body.
				body, err := u.codec.EncodeRequest(req("m-1", stream))
				require.NoError(t, err)
				want, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url("m-1", stream), nil)
				require.NoError(t, err)
				require.Equal(t, want.Method, r1.Method)
				require.Equal(t, want.URL, r1.URL)
				require.Equal(t, want.Host, r1.Host)
				require.Equal(t, want.Proto, r1.Proto)
				require.Equal(t, want.ProtoMajor, r1.ProtoMajor)
				require.Equal(t, want.ProtoMinor, r1.ProtoMinor)
				require.Equal(t, ctx, r1.Context())
				require.Equal(t, int64(len(body)), r1.ContentLength)
				got, err := io.ReadAll(r1.Body)
				require.NoError(t, err)
				require.Equal(t, body, got)
				again, err := r1.GetBody()
				require.NoError(t, err)
				got, err = io.ReadAll(again)
				require.NoError(t, err)
				require.Equal(t, body, got, "GetBody replays the body")

				require.Equal(t, "rid-1", r1.Header.Get("X-Request-Id"))
				require.Equal(t, "rid-2", r2.Header.Get("X-Request-Id"))
				require.Equal(t, "application/json", r1.Header.Get("Content-Type"))
				accept := "application/json"
				if stream {
					accept = "text/event-stream"
				}
				require.Equal(t, accept, r1.Header.Get("Accept"))

				// Each request's URL is its own.
				require.NotSame(t, r1.URL, r2.URL)
				r1.URL.Path, r1.URL.Host = "/changed", "elsewhere"
				r3, err := u.newRequest(ctx, req("m-1", stream), "rid-3")
				require.NoError(t, err)
				require.Equal(t, want.URL, r3.URL, "changing a request's URL changes no other's")

				// Each request's header is its own, and its values too.
				before := r2.Header.Clone()
				for k := range r1.Header {
					r1.Header.Add(k, "added-1")
				}
				require.Equal(t, before, r2.Header, "adding to a request's header values changes no other's")
				for k := range r2.Header {
					r2.Header.Add(k, "added-2")
				}
				for k, v := range r1.Header {
					require.Equal(t, "added-1", v[len(v)-1], "what another request added to %s is not in this one's", k)
				}
				r1.Header.Set("Content-Type", "text/plain")
				r1.Header.Set("X-Extra", "x")
				r2.Header.Del("Accept")
				r4, err := u.newRequest(ctx, req("m-2", stream), "rid-2")
				require.NoError(t, err)
				require.Equal(t, before, r4.Header, "nor the next request's")
			}
		})
	}
}

// TestNewRequestProviderHeadersWin: a provider's own header fields win
// over the ones the gateway sets, the clone's as the whole request's.
func TestNewRequestProviderHeadersWin(t *testing.T) {
	for _, kind := range []ProviderKind{KindOpenAI, KindGemini} {
		p := &Provider{Name: "p", Kind: kind, BaseURL: "http://up.example", APIKey: NewSecret("k-1"),
			Headers: map[string]Secret{"accept": NewSecret("application/x-ndjson"), "x-request-id": NewSecret("fixed"), "content-type": NewSecret("application/json; charset=utf-8")}}
		u := newUpstream(p, http.DefaultTransport)
		for _, stream := range []bool{false, true} {
			hr, err := u.newRequest(t.Context(), &llm.Request{Model: "m", Stream: stream, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}}}}, "rid-1")
			require.NoError(t, err)
			require.Equal(t, []string{"application/x-ndjson"}, hr.Header["Accept"], kind)
			require.Equal(t, []string{"fixed"}, hr.Header["X-Request-Id"], kind)
			require.Equal(t, []string{"application/json; charset=utf-8"}, hr.Header["Content-Type"], kind)
		}
	}
}
