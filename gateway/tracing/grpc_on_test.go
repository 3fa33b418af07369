//go:build otlpgrpc

package tracing

import (
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// The OTLP/gRPC exporter is in builds with -tags otlpgrpc (make test runs
// this package's tests with it). The gateway's spans over OTLP/HTTP, end
// to end, are the gateway package's TestTracesOTLPHTTP; the protocol only
// changes the exporter NewProvider builds, which is what this tests.

// grpcCollector is an OTLP/gRPC receiver keeping the spans it gets, their
// resource's service.name and each export's authorization metadata.
type grpcCollector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string
	auth    []string
}

func (g *grpcCollector) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	g.auth = append(g.auth, md.Get("authorization")...)
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				g.service = append(g.service, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			g.spans = append(g.spans, ss.GetSpans()...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// TestTracesOTLPGRPC: with the protocol grpc chosen by the standard OTEL_*
// variables alone, a request's server span and its attempt's client span
// reach a collector over OTLP/gRPC (flushed at Shutdown), in one trace,
// with the service name and headers of the environment.
func TestTracesOTLPGRPC(t *testing.T) {
	g := &grpcCollector{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, g)
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer collector-token")
	t.Setenv("OTEL_SERVICE_NAME", "brownout-test")

	s := Settings{}
	require.True(t, s.On(), "the endpoint variable turns tracing on")
	tp, err := NewProvider(t.Context(), s)
	require.NoError(t, err)
	require.NotNil(t, tp)
	tr := New(tp)
	target := &policy.Target{Provider: "anthropic", Model: "claude-sonnet"}
	h := tr.Handler("POST /v1/chat/completions", "openai", func(w http.ResponseWriter, r *http.Request) {
		x := tr.Begin(r.Context(), "req-1", &llm.Request{Model: "chat"}, nil)
		d := &policy.Decision{Target: target, Try: 1, Tier: "primary"}
		// The upstream request carries the server span's context, as the
		// gateway's do.
		up := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/v1/messages", nil).WithContext(r.Context())
		x.Send(d, "anthropic", "anthropic", up)
		x.Observe(d, &policy.Outcome{Class: policy.OK}, Answer{})
		x.Served(Served{Target: target.Key(), Model: target.Model, Tier: "primary", Attempts: 1})
	})
	h(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
	require.NoError(t, tp.Shutdown(t.Context()))

	g.mu.Lock()
	defer g.mu.Unlock()
	require.Len(t, g.spans, 2)
	assert.Contains(t, g.service, "brownout-test")
	assert.Contains(t, g.auth, "Bearer collector-token")
	var server, client *tracepb.Span
	for _, sp := range g.spans {
		switch sp.GetKind() {
		case tracepb.Span_SPAN_KIND_SERVER:
			server = sp
		case tracepb.Span_SPAN_KIND_CLIENT:
			client = sp
		}
	}
	require.NotNil(t, server)
	require.NotNil(t, client)
	assert.Equal(t, "POST /v1/chat/completions", server.GetName())
	assert.Equal(t, "chat claude-sonnet", client.GetName())
	assert.Equal(t, hex.EncodeToString(server.GetTraceId()), hex.EncodeToString(client.GetTraceId()))
	assert.Equal(t, hex.EncodeToString(server.GetSpanId()), hex.EncodeToString(client.GetParentSpanId()))
}
