//go:build otlpgrpc

package gateway_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/brownout-dev/brownout/gateway"
)

// The OTLP/gRPC exporter is in builds with -tags otlpgrpc (make test runs
// these with it).

// grpcCollector is an OTLP/gRPC receiver.
type grpcCollector struct {
	collectortrace.UnimplementedTraceServiceServer
	c *collector
}

func (g *grpcCollector) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	g.c.add(req, "")
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// TestTracesOTLPGRPC: the same over OTLP/gRPC, chosen by the standard
// OTEL_* variables alone.
func TestTracesOTLPGRPC(t *testing.T) {
	c := &collector{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, &grpcCollector{c: c})
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_SERVICE_NAME", "brownout-test")
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	addFault(t, m.alpha, `{kind: http_error, status: 503}`)
	require.Equal(t, 200, g.do(t, false, nil).status)
	require.NoError(t, g.srv.Close())
	checkExported(t, c)
}
