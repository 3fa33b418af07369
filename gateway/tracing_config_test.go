package gateway_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
)

// TestTracingConfigErrors: each mistake in tracing: (or, when tracing is
// on, in the OTEL_* variables) is an error naming file:line:col and the
// field or the variable; a tracing header's secret never appears.
func TestTracingConfigErrors(t *testing.T) {
	secretEnv := map[string]string{"OPENAI_API_KEY": "sk-very-secret", "COLLECTOR_TOKEN": "tok-very-secret"}
	tests := []struct {
		name    string
		tracing string
		env     map[string]string
		want    string
	}{
		{"protocol", "tracing: {protocol: udp}\n", nil, `gw.yaml:10:21: tracing.protocol: unknown protocol "udp" (http/protobuf or grpc)`},
		{"http/json", "tracing: {protocol: http/json}\n", nil, "tracing.protocol: http/json is not supported"},
		{"endpoint without scheme", "tracing: {endpoint: 127.0.0.1:4318}\n", nil, `gw.yaml:10:21: tracing.endpoint: "127.0.0.1:4318" is not an http or https URL`},
		{"sample ratio", "tracing: {sample_ratio: 1.5}\n", nil, "gw.yaml:10:25: tracing.sample_ratio: must be from 0 to 1 (got 1.5)"},
		{"negative timeout", "tracing: {timeout: -1s}\n", nil, `gw.yaml:10:20: tracing.timeout: duration "-1s" must not be negative`},
		{"unset header secret", "tracing: {headers: {Authorization: \"Bearer ${NOPE}\"}}\n", nil, "tracing.headers.Authorization: environment variable NOPE is not set"},
		{"bad header name", "tracing: {headers: {\"a b\": \"Bearer ${COLLECTOR_TOKEN}\"}}\n", nil, `tracing.headers: "a b" is not a header name`},
		{"env protocol when on", "tracing: {enabled: true}\n", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"},
			`gw.yaml:10:10: tracing: environment variable OTEL_EXPORTER_OTLP_PROTOCOL: unknown protocol "thrift"`},
		{"env sampler when on by env", "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_SAMPLER": "sometimes"},
			`tracing: environment variable OTEL_TRACES_SAMPLER: "sometimes" is not one of always_on`},
		{"env sampler arg", "tracing: {enabled: true}\n", map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
			`environment variable OTEL_TRACES_SAMPLER_ARG: "2" is not a ratio from 0 to 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTelEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := gateway.ParseConfig("gw.yaml", []byte(minimalConfig+tt.tracing), env(secretEnv))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "very-secret")
		})
	}
}

// TestTracingConfigOffIgnoresEnv: while tracing is off a bad OTEL_*
// variable is nobody's business (nothing reads it); a valid block loads.
func TestTracingConfigOffIgnoresEnv(t *testing.T) {
	clearOTelEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift")
	secretEnv := map[string]string{"OPENAI_API_KEY": "sk-very-secret", "COLLECTOR_TOKEN": "tok-very-secret"}
	for _, block := range []string{"", "tracing: {enabled: false}\n",
		"tracing: {enabled: true, protocol: http/protobuf, endpoint: \"http://127.0.0.1:4318\", sample_ratio: 0.25, timeout: 2s, headers: {Authorization: \"Bearer ${COLLECTOR_TOKEN}\"}}\n"} {
		_, err := gateway.ParseConfig("gw.yaml", []byte(minimalConfig+block), env(secretEnv))
		require.NoError(t, err, block)
	}
}

// clearOTelEnv unsets the OTEL_* variables a test's outcome depends on.
func clearOTelEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"} {
		t.Setenv(k, "")
	}
}
