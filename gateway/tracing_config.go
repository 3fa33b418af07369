package gateway

import (
	"errors"

	"github.com/brownout-dev/brownout/gateway/tracing"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TracingConfig configures OpenTelemetry traces (package gateway/tracing):
// a server span per request and a client span per upstream attempt,
// exported over OTLP. Every field left empty is taken from the standard
// OTEL_* environment variables; tracing is off unless enabled here or an
// OTLP endpoint is named in the environment. It is read at start: a change
// takes effect at the next start.
type TracingConfig struct {
	// Enabled turns tracing on or off whatever the environment says.
	// Default: on when OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and neither
	// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none), else off.
	Enabled *bool `yaml:"enabled,omitempty"`
	// Endpoint is the collector's URL, e.g. http://127.0.0.1:4318
	// (http/protobuf; /v1/traces is added when the URL has no path) or
	// http://127.0.0.1:4317 (grpc). Default: the OTEL_EXPORTER_OTLP_*
	// variables, else the exporter's localhost default.
	Endpoint string `yaml:"endpoint,omitempty"`
	// Protocol is http/protobuf or grpc. Default:
	// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.
	Protocol string `yaml:"protocol,omitempty"`
	// Headers are sent with every export (${NAME} references resolved;
	// values are secrets). Default: OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]Secret `yaml:"headers,omitempty"`
	// ServiceName is service.name. Default: OTEL_SERVICE_NAME, else brownout.
	ServiceName string `yaml:"service_name,omitempty"`
	// SampleRatio samples this share of new traces, 0 to 1, and follows the
	// caller's traceparent. Default: OTEL_TRACES_SAMPLER, else every trace.
	SampleRatio *float64 `yaml:"sample_ratio,omitempty"`
	// Timeout bounds one export. Default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s.
	Timeout yamlfile.Duration `yaml:"timeout,omitempty"`
}

// settings are the tracing package's settings for this configuration. The
// OTEL_* variables are read from the process environment, where the
// OpenTelemetry SDK reads them (not through LoadOptions.LookupEnv, which
// resolves ${NAME} references).
func (t *TracingConfig) settings() tracing.Settings {
	s := tracing.Settings{Enabled: t.Enabled, Endpoint: t.Endpoint, Protocol: t.Protocol, ServiceName: t.ServiceName,
		SampleRatio: t.SampleRatio, Timeout: t.Timeout.D()}
	if len(t.Headers) > 0 {
		s.Headers = make(map[string]string, len(t.Headers))
		for k, v := range t.Headers {
			s.Headers[k] = v.Value()
		}
	}
	return s
}

// validate resolves the header secrets and reports every problem under
// tracing.FIELD; a bad OTEL_* variable (checked only when tracing is on) is
// reported under tracing, naming the variable.
func (t *TracingConfig) validate(add func(path, format string, args ...any), lookup func(string) (string, bool)) {
	for k, v := range t.Headers {
		if err := v.resolve(lookup); err != nil {
			add("tracing.headers."+k, "%v", err)
		}
		t.Headers[k] = v
	}
	s := t.settings()
	err := s.Check()
	if err == nil {
		return
	}
	var errs interface{ Unwrap() []error }
	list := []error{err}
	if errors.As(err, &errs) {
		list = errs.Unwrap()
	}
	for _, e := range list {
		var fe *tracing.FieldError
		switch {
		case !errors.As(e, &fe):
			add("tracing", "%v", e)
		case fe.FromEnv():
			add("tracing", "environment variable %s: %s", fe.Field, fe.Msg)
		default:
			add("tracing."+fe.Field, "%s", fe.Msg)
		}
	}
}
