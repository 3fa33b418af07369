package gateway_test

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/brownout-dev/brownout/gateway"
)

// collector keeps the spans of the OTLP export requests it receives, with
// their resource's service.name.
type collector struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string
	headers []string // the Authorization header of each export
}

func (c *collector) add(req *collectortrace.ExportTraceServiceRequest, auth string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.headers = append(c.headers, auth)
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				c.service = append(c.service, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
}

// ServeHTTP is an OTLP/HTTP receiver: POST /v1/traces with a protobuf
// ExportTraceServiceRequest.
func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.add(&req, r.Header.Get("Authorization"))
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func strAttr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// checkExported: the collector received one failover request's spans —
// the server span and two client spans under it, in one trace, with their
// GenAI attributes.
func checkExported(t *testing.T, c *collector) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.spans, 3)
	assert.Contains(t, c.service, "brownout-test")
	var server *tracepb.Span
	for _, s := range c.spans {
		if s.GetKind() == tracepb.Span_SPAN_KIND_SERVER {
			server = s
		}
	}
	require.NotNil(t, server)
	assert.Equal(t, "POST /v1/chat/completions", server.GetName())
	var got []string
	for _, s := range c.spans {
		if s == server {
			continue
		}
		assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, s.GetKind())
		assert.Equal(t, hex.EncodeToString(server.GetTraceId()), hex.EncodeToString(s.GetTraceId()))
		assert.Equal(t, hex.EncodeToString(server.GetSpanId()), hex.EncodeToString(s.GetParentSpanId()))
		got = append(got, s.GetName()+" "+strAttr(s.GetAttributes(), "gen_ai.provider.name")+" "+strAttr(s.GetAttributes(), "brownout.outcome"))
	}
	assert.ElementsMatch(t, []string{"chat gpt-4o openai overloaded", "chat claude-sonnet anthropic ok"}, got)
	var failover bool
	for _, e := range server.GetEvents() {
		failover = failover || e.GetName() == "brownout.failover"
	}
	assert.True(t, failover, "the fail-over is an event of the server span")
}

// TestTracesOTLPHTTP: configured by tracing:, the gateway exports its
// spans over OTLP/HTTP to a collector on loopback (flushed at Close), with
// the configured header.
func TestTracesOTLPHTTP(t *testing.T) {
	c := &collector{}
	hs := httptest.NewServer(c)
	defer hs.Close()
	m := startMocks(t)
	cfg := m.config(t, `tracing:
  enabled: true
  endpoint: "`+hs.URL+`"
  service_name: brownout-test
  headers: {Authorization: "Bearer ${ALPHA_KEY}"}
`)
	g := startGateway(t, cfg, gateway.Options{})
	addFault(t, m.alpha, `{kind: http_error, status: 503}`)
	require.Equal(t, 200, g.do(t, false, nil).status)
	require.NoError(t, g.srv.Close())
	checkExported(t, c)
	assert.Contains(t, c.headers, "Bearer sk-alpha-secret", "the configured header reached the collector")
}
