package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Protocols of the OTLP exporter (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolHTTP = "http/protobuf" // OTLP over HTTP, protobuf bodies (the default)
	ProtocolGRPC = "grpc"          // OTLP over gRPC
)

// DefaultServiceName is service.name when neither Settings.ServiceName nor
// OTEL_SERVICE_NAME sets it.
const DefaultServiceName = "brownout"

// Settings configure trace export. Each field left at its zero value is
// decided by the standard OTEL_* environment variables, read by the
// OpenTelemetry SDK and its OTLP exporters as usual; a field that is set
// wins over its variable.
type Settings struct {
	// Enabled turns tracing on (true) or off (false) whatever the
	// environment says. Nil: on when the environment names an OTLP endpoint
	// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
	// unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
	Enabled *bool
	// Endpoint is the collector's URL (http://127.0.0.1:4318 for
	// http/protobuf, http://127.0.0.1:4317 for grpc; an http:// URL is sent
	// without TLS). For http/protobuf a URL without a path gets the
	// signal's path, /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does. Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
	// OTEL_EXPORTER_OTLP_ENDPOINT, else the exporter's localhost default.
	Endpoint string
	// Protocol is ProtocolHTTP or ProtocolGRPC. Default:
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL, else
	// http/protobuf.
	Protocol string
	// Headers are sent with every export (a collector's credentials).
	// Default: OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string
	// ServiceName is the resource's service.name. Default:
	// OTEL_SERVICE_NAME, else DefaultServiceName.
	ServiceName string
	// SampleRatio samples this share of new traces (0 to 1), and follows
	// the caller's decision when the request carries a traceparent
	// (parentbased_traceidratio). Nil: OTEL_TRACES_SAMPLER and
	// OTEL_TRACES_SAMPLER_ARG, else every trace (parentbased_always_on).
	SampleRatio *float64
	// Timeout bounds one export. Default: OTEL_EXPORTER_OTLP_TIMEOUT, else
	// 10s.
	Timeout time.Duration
	// LookupEnv reads the environment. Default os.LookupEnv. (The SDK and
	// its exporters read the process environment themselves: a LookupEnv
	// other than os.LookupEnv changes only what On and Check see.)
	LookupEnv func(string) (string, bool)
}

// FieldError is a problem with one setting: Field is the Settings field as
// written in a configuration file ("protocol", "sample_ratio") or the
// environment variable ("OTEL_EXPORTER_OTLP_PROTOCOL").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// FromEnv reports whether the error is about an environment variable.
func (e *FieldError) FromEnv() bool { return strings.HasPrefix(e.Field, "OTEL_") }

func (s *Settings) env(name string) string {
	lookup := s.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, _ := lookup(name)
	return strings.TrimSpace(v)
}

// On reports whether traces are exported (see Enabled).
func (s *Settings) On() bool {
	if strings.EqualFold(s.env("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if s.Enabled != nil {
		return *s.Enabled
	}
	if strings.EqualFold(s.env("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return s.env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || s.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// protocol returns the protocol in effect and the field or variable that
// chose it.
func (s *Settings) protocol() (string, string) {
	if s.Protocol != "" {
		return s.Protocol, "protocol"
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := s.env(name); v != "" {
			return v, name
		}
	}
	return ProtocolHTTP, "protocol"
}

// samplers are the OTEL_TRACES_SAMPLER values the Go SDK implements.
var samplers = []string{"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}

// Check returns every problem with the settings as a list of *FieldError
// (errors.Join), nil when there is none. The environment is checked only
// when tracing is on: a variable nothing reads is not an error.
func (s *Settings) Check() error {
	var es []error
	add := func(field, format string, args ...any) {
		es = append(es, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if p, field := s.protocol(); (field == "protocol" || s.On()) && p != ProtocolHTTP && p != ProtocolGRPC {
		if p == "http/json" {
			add(field, "http/json is not supported by the Go OTLP exporter (use http/protobuf or grpc)")
		} else {
			add(field, "unknown protocol %q (http/protobuf or grpc)", p)
		}
	}
	if p, field := s.protocol(); p == ProtocolGRPC && !grpcBuilt && (field == "protocol" || s.On()) {
		add(field, "grpc is not in this build, which exports OTLP over HTTP: use http/protobuf, or build with -tags otlpgrpc")
	}
	if s.Endpoint != "" {
		if u, err := url.Parse(s.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("endpoint", "%q is not an http or https URL (e.g. http://127.0.0.1:4318)", s.Endpoint)
		}
	}
	if r := s.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) {
		add("sample_ratio", "must be from 0 to 1 (got %v)", *r)
	}
	if s.Timeout < 0 {
		add("timeout", "must not be negative")
	}
	for k := range s.Headers {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			add("headers", "%q is not a header name", k)
		}
	}
	if s.On() && s.SampleRatio == nil {
		if v := s.env("OTEL_TRACES_SAMPLER"); v != "" && !slices.Contains(samplers, v) {
			add("OTEL_TRACES_SAMPLER", "%q is not one of %s", v, strings.Join(samplers, ", "))
		} else if strings.HasSuffix(v, "traceidratio") {
			if a := s.env("OTEL_TRACES_SAMPLER_ARG"); a != "" {
				if f, err := strconv.ParseFloat(a, 64); err != nil || f < 0 || f > 1 {
					add("OTEL_TRACES_SAMPLER_ARG", "%q is not a ratio from 0 to 1", a)
				}
			}
		}
	}
	return errors.Join(es...)
}

// NewProvider returns a tracer provider exporting to the OTLP endpoint the
// settings and the environment name, batching spans; nil and no error when
// tracing is off (see Settings.On). Nothing is dialled until the first
// export. Shut the provider down to flush the spans still buffered.
func NewProvider(ctx context.Context, s Settings) (*sdktrace.TracerProvider, error) {
	if !s.On() {
		return nil, nil
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	exp, err := s.exporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	name := s.ServiceName
	if name == "" {
		name = s.env("OTEL_SERVICE_NAME")
	}
	if name == "" {
		name = DefaultServiceName
	}
	// The SDK's default resource reads OTEL_RESOURCE_ATTRIBUTES and
	// OTEL_SERVICE_NAME; the service name chosen above wins.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if s.SampleRatio != nil {
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*s.SampleRatio))))
	}
	// Without a sampler option the SDK reads OTEL_TRACES_SAMPLER.
	return sdktrace.NewTracerProvider(opts...), nil
}

// exporter builds the OTLP exporter of the protocol in effect; options set
// here win over the exporter's own reading of the environment.
func (s *Settings) exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if p, _ := s.protocol(); p == ProtocolGRPC {
		return grpcExporter(ctx, s)
	}
	var opts []otlptracehttp.Option
	if s.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(tracesURL(s.Endpoint)))
	}
	if len(s.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(s.Headers))
	}
	if s.Timeout > 0 {
		opts = append(opts, otlptracehttp.WithTimeout(s.Timeout))
	}
	return otlptracehttp.New(ctx, opts...)
}

// tracesURL is endpoint with the OTLP/HTTP traces path when it has no path.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}
