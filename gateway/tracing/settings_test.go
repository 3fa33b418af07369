package tracing

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func ptr[T any](v T) *T { return &v }

func TestOn(t *testing.T) {
	endpoint := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
	for _, tc := range []struct {
		name    string
		enabled *bool
		env     map[string]string
		want    bool
	}{
		{"nothing set: off", nil, nil, false},
		{"an endpoint in the environment", nil, endpoint, true},
		{"a traces endpoint in the environment", nil, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"exporter none", nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{"enabled without environment", ptr(true), nil, true},
		{"disabled despite the endpoint", ptr(false), endpoint, false},
		{"enabled, exporter none: the file wins", ptr(true), map[string]string{"OTEL_TRACES_EXPORTER": "none"}, true},
		{"sdk disabled wins over everything", ptr(true), map[string]string{"OTEL_SDK_DISABLED": "true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Settings{Enabled: tc.enabled, LookupEnv: envOf(tc.env)}
			assert.Equal(t, tc.want, s.On())
		})
	}
}

func TestCheck(t *testing.T) {
	on := ptr(true)
	for _, tc := range []struct {
		name string
		s    Settings
		env  map[string]string
		want []string // Field: Msg of each error
	}{
		{"defaults", Settings{Enabled: on}, nil, nil},
		{"grpc from the environment", Settings{Enabled: on}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, grpcMissing("OTEL_EXPORTER_OTLP_PROTOCOL")},
		{"the traces variable wins", Settings{Enabled: on}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "zipkin"},
			[]string{`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: unknown protocol "zipkin" (http/protobuf or grpc)`}},
		{"the field wins over the environment", Settings{Enabled: on, Protocol: "grpc"}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "zipkin"}, grpcMissing("protocol")},
		{"a bad variable is ignored while off", Settings{}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "zipkin", "OTEL_TRACES_SAMPLER": "x"}, nil},
		{"a bad field is an error even off", Settings{Protocol: "http/json"}, nil,
			[]string{"protocol: http/json is not supported by the Go OTLP exporter (use http/protobuf or grpc)"}},
		{"every field error at once", Settings{Endpoint: "localhost:4318", SampleRatio: ptr(-0.5), Headers: map[string]string{"": "x"}}, nil,
			[]string{`endpoint: "localhost:4318" is not an http or https URL (e.g. http://127.0.0.1:4318)`, "sample_ratio: must be from 0 to 1 (got -0.5)", `headers: "" is not a header name`}},
		{"sampler", Settings{Enabled: on}, map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"},
			[]string{`OTEL_TRACES_SAMPLER: "jaeger_remote" is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio`}},
		{"sampler arg", Settings{Enabled: on}, map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "half"},
			[]string{`OTEL_TRACES_SAMPLER_ARG: "half" is not a ratio from 0 to 1`}},
		{"sample_ratio replaces the sampler variables", Settings{Enabled: on, SampleRatio: ptr(0.1)}, map[string]string{"OTEL_TRACES_SAMPLER": "bogus"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.LookupEnv = envOf(tc.env)
			err := tc.s.Check()
			var got []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var fe *FieldError
					require.True(t, errors.As(e, &fe))
					assert.Equal(t, fe.Field[:min(5, len(fe.Field))] == "OTEL_", fe.FromEnv())
					got = append(got, fe.Error())
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":            "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":           "http://127.0.0.1:4318/v1/traces",
		"https://otel.example/custom/path": "https://otel.example/custom/path",
	} {
		assert.Equal(t, want, tracesURL(in), in)
	}
}

func TestNewProvider(t *testing.T) {
	tp, err := NewProvider(context.Background(), Settings{LookupEnv: envOf(nil)})
	require.NoError(t, err)
	assert.Nil(t, tp, "off: no provider")

	_, err = NewProvider(context.Background(), Settings{Enabled: ptr(true), Protocol: "udp", LookupEnv: envOf(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `protocol: unknown protocol "udp"`)

	protocols := []string{ProtocolHTTP}
	if grpcBuilt {
		protocols = append(protocols, ProtocolGRPC)
	} else {
		_, err := NewProvider(context.Background(), Settings{Enabled: ptr(true), Protocol: ProtocolGRPC, LookupEnv: envOf(nil)})
		require.ErrorContains(t, err, "protocol: grpc is not in this build")
	}
	for _, p := range protocols {
		tp, err := NewProvider(context.Background(), Settings{Enabled: ptr(true), Protocol: p, Endpoint: "http://127.0.0.1:9", LookupEnv: envOf(nil)})
		require.NoError(t, err, p)
		require.NotNil(t, tp, p)
		require.NoError(t, tp.Shutdown(context.Background()), p) // nothing buffered: no export
	}
}

// grpcMissing is the error a grpc protocol named by field gets in a build
// without the gRPC exporter (none with -tags otlpgrpc).
func grpcMissing(field string) []string {
	if grpcBuilt {
		return nil
	}
	return []string{field + ": grpc is not in this build, which exports OTLP over HTTP: use http/protobuf, or build with -tags otlpgrpc"}
}
