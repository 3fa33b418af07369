//go:build otlpgrpc

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// grpcBuilt: this build exports OTLP over gRPC too (-tags otlpgrpc).
const grpcBuilt = true

// grpcExporter is the OTLP/gRPC exporter of the settings.
func grpcExporter(ctx context.Context, s *Settings) (sdktrace.SpanExporter, error) {
	var opts []otlptracegrpc.Option
	if s.Endpoint != "" {
		opts = append(opts, otlptracegrpc.WithEndpointURL(s.Endpoint))
	}
	if len(s.Headers) > 0 {
		opts = append(opts, otlptracegrpc.WithHeaders(s.Headers))
	}
	if s.Timeout > 0 {
		opts = append(opts, otlptracegrpc.WithTimeout(s.Timeout))
	}
	return otlptracegrpc.New(ctx, opts...)
}
