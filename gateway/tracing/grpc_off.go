//go:build !otlpgrpc

package tracing

import (
	"context"
	"errors"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// grpcBuilt: the default build exports OTLP over HTTP only (the
// OpenTelemetry default, http/protobuf); the gRPC exporter and its
// dependencies (grpc, protobuf) are left out of the binary. Build with
// -tags otlpgrpc to have it.
const grpcBuilt = false

func grpcExporter(context.Context, *Settings) (sdktrace.SpanExporter, error) {
	return nil, errors.New("grpc is not in this build (build with -tags otlpgrpc)")
}
