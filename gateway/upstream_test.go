package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/gemini"
	"github.com/brownout-dev/brownout/llm/openai"
)

type seen struct {
	method, path, query string
	proto               int
	header              http.Header
	model               string
}

// capture is an upstream of one format that records what it received and
// answers "ok".
func capture(t *testing.T, codec llm.Codec, h2c bool) (*httptest.Server, func() seen) {
	var mu sync.Mutex
	var last seen
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s := seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, proto: r.ProtoMajor, header: r.Header.Clone()}
		if req, err := codec.DecodeRequest(body); err == nil {
			s.model = req.Model
		}
		mu.Lock()
		last = s
		mu.Unlock()
		b, _ := codec.EncodeResponse(&llm.Response{ID: "r1", Model: "served-model", Content: "ok", FinishReason: llm.FinishStop,
			Usage: llm.Usage{InputTokens: 3, OutputTokens: 1}})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	if h2c {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Config.Protocols = &p
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, func() seen { mu.Lock(); defer mu.Unlock(); return last }
}

// TestUpstreamKinds: each provider kind gets its URL layout, auth header,
// version and extra headers; x-request-id is forwarded; h2c speaks HTTP/2.
func TestUpstreamKinds(t *testing.T) {
	tests := []struct {
		name     string
		codec    llm.Codec
		provider string // YAML of the provider, %s is the base URL
		h2c      bool
		check    func(t *testing.T, s seen)
	}{
		{"openai", openai.Codec{}, `{name: p, kind: openai, base_url: "%s/v1", api_key: sk-1, headers: {OpenAI-Organization: org-9}}`, false, func(t *testing.T, s seen) {
			assert.Equal(t, "/v1/chat/completions", s.path)
			assert.Equal(t, "Bearer sk-1", s.header.Get("Authorization"))
			assert.Equal(t, "org-9", s.header.Get("OpenAI-Organization"))
			assert.Equal(t, "m-1", s.model)
		}},
		{"azure", openai.Codec{}, `{name: p, kind: azure, base_url: "%s", api_key: az-1, api_version: 2024-10-21}`, false, func(t *testing.T, s seen) {
			assert.Equal(t, "/openai/deployments/m-1/chat/completions", s.path)
			assert.Equal(t, "api-version=2024-10-21", s.query)
			assert.Equal(t, "az-1", s.header.Get("Api-Key"))
			assert.Empty(t, s.header.Get("Authorization"))
		}},
		{"anthropic", anthropic.Codec{}, `{name: p, kind: anthropic, base_url: "%s", api_key: ant-1}`, false, func(t *testing.T, s seen) {
			assert.Equal(t, "/v1/messages", s.path)
			assert.Equal(t, "ant-1", s.header.Get("X-Api-Key"))
			assert.Equal(t, "2023-06-01", s.header.Get("Anthropic-Version"))
			assert.Equal(t, "m-1", s.model)
		}},
		{"gemini", gemini.Codec{}, `{name: p, kind: gemini, base_url: "%s", api_key: gm-1}`, false, func(t *testing.T, s seen) {
			assert.Equal(t, "/v1beta/models/m-1:generateContent", s.path)
			assert.Equal(t, "gm-1", s.header.Get("X-Goog-Api-Key"))
			assert.Empty(t, s.query, "the key is never in the URL")
		}},
		{"openai-compatible over h2c", openai.Codec{}, `{name: p, kind: openai_compatible, base_url: "%s/api/v1", protocol: h2c}`, true, func(t *testing.T, s seen) {
			assert.Equal(t, "/api/v1/chat/completions", s.path)
			assert.Equal(t, 2, s.proto, "HTTP/2")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, last := capture(t, tt.codec, tt.h2c)
			cfg, err := gateway.ParseConfig("u.yaml", []byte(fmt.Sprintf("version: 1\nproviders:\n  - "+tt.provider+"\nroutes: [{name: chat, targets: [{provider: p, model: m-1}]}]\n", up.URL)), gateway.LoadOptions{})
			require.NoError(t, err)
			g := startGateway(t, cfg, gateway.Options{})
			r := g.do(t, false, map[string]string{"X-Request-Id": "rid-7"})
			require.Equal(t, 200, r.status, r.body)
			assert.Equal(t, "ok", r.text)
			assert.Contains(t, r.body, `"model":"chat"`, "the response names the model the client asked for")
			assert.Equal(t, "p:m-1", r.header.Get(gateway.HeaderTarget), "the header names the target that served")
			s := last()
			assert.Equal(t, "POST", s.method)
			assert.Equal(t, "rid-7", s.header.Get("X-Request-Id"))
			assert.NotContains(t, s.header.Get("Authorization"), "client-key")
			tt.check(t, s)
		})
	}
}
