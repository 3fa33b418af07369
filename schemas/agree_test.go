package schemas

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/scenarios"
)

// loaders are the Go loaders the schemas describe.
var loaders = map[string]func(file string, data []byte) error{
	"gateway": func(file string, data []byte) error {
		env := func(string) (string, bool) { return "sk-test", true }
		_, err := gateway.ParseConfig(file, data, gateway.LoadOptions{LookupEnv: env})
		return err
	},
	"providers": func(file string, data []byte) error {
		_, err := mockprovider.Parse(file, data)
		return err
	},
	"scenario": func(file string, data []byte) error {
		_, err := scenarios.Parse(file, data)
		return err
	},
}

// mutation sets (or deletes) one value of a base file in testdata.
type mutation struct {
	path  string // dotted; numbers index lists
	value string // YAML; "" with del
	del   bool
	valid bool // what the loader and the schema must both say
}

// The schema and the loader agree: each mutation of a valid base file is
// accepted by both or rejected by both. The valid cases pin the scalar
// spellings the schema must allow; the invalid ones are unknown fields, wrong
// types and values out of range.
func TestSchemaAgreesWithLoader(t *testing.T) {
	cases := map[string][]mutation{
		"providers": {
			{path: "providers.0.models.0.ttft", value: "300ms", valid: true},
			{path: "providers.0.models.0.ttft", value: "0", valid: true},
			{path: "providers.0.models.0.ttft", value: "{median: 400ms, p99: 2s}", valid: true},
			{path: "providers.0.models.0.ttft", value: "{min: 100ms, max: 900ms}", valid: true},
			{path: "providers.0.models.0.ttft", value: "{mediam: 400ms}"},
			{path: "providers.0.models.0.ttft", value: "{dist: lognormal, median: 400ms, p99: 2s}", valid: true},
			{path: "providers.0.models.0.ttft", value: "{dist: gamma, median: 400ms, p99: 2s}"},
			{path: "providers.0.models.0.ttft", value: "300"},
			{path: "providers.0.models.0.ttft", value: "-1s"},
			{path: "providers.0.models.0.ttft", value: "[1s]"},
			{path: "providers.0.models.0.output_tokens", value: "180", valid: true},
			{path: "providers.0.models.0.output_tokens", value: "{median: 180, p99: 900}", valid: true},
			{path: "providers.0.models.0.output_tokens", value: "{mean: 100, sdev: 10}"},
			{path: "providers.0.models.0.output_tokens", value: "many"},
			{path: "providers.0.models.0.jitter", value: "25%", valid: true},
			{path: "providers.0.models.0.jitter", value: "0.25", valid: true},
			{path: "providers.0.models.0.jitter", value: "150%"},
			{path: "providers.0.models.0.jitter", value: "1.5"},
			{path: "providers.0.models.0.jitter", value: "lots"},
			{path: "providers.0.format", value: "anthropic", valid: true},
			{path: "providers.0.format", value: "grpc"},
			{path: "providers.0.faults", value: "[{kind: http_error, status: 429, retry_after: 2s, probability: 50%}]", valid: true},
			{path: "providers.0.faults", value: "[{kind: ttft, delay: {median: 1s, p99: 3s}, first: 10}]", valid: true},
			{path: "providers.0.faults", value: "[{kind: stall, after: 10, for: 5s, ramp: {from: 0%, to: 100%, over: 1m}}]", valid: true},
			{path: "providers.0.faults", value: "[{kind: reset, status: 500}]"},
			{path: "providers.0.faults", value: "[{kind: explode}]"},
			{path: "providers.0.faults", value: "[{status: 500}]"},
			{path: "providers.0.faults", value: "[{kind: http_error, probablity: 50%}]"},
			{path: "providers.0.modles", value: "[]"},
			{path: "providers.0.seed", value: "one"},
			{path: "providers.0.models", del: true},
			{path: "version", value: "2"},
			{path: "version", del: true},
			{path: "providers.0.name", del: true},
			{path: "providers.0.format", del: true},
			{path: "providers.0.models.0.name", del: true},
		},
		"gateway": {
			{path: "routes.0.targets.0.timeouts", value: "{first_token: 8s, total: 2m, token_rate_floor: 5}", valid: true},
			{path: "routes.0.targets.0.timeouts", value: "{first_token: 8}"},
			{path: "routes.0.targets.0.timeouts", value: "{first_token: -1s}"},
			{path: "routes.0.targets.0.timeouts", value: "{first_tokn: 8s}"},
			{path: "routes.0.targets.0.retry", value: "{attempts: 2, base: 200ms, cap: 2s}", valid: true},
			{path: "policy", value: "{retry_budget: {ratio: 20%, window: 1m}, breaker: {error_rate: 0.5, open_for: 30s}}", valid: true},
			{path: "policy", value: "{retry_budget: {ratio: 120%}}"},
			{path: "alerts", value: "{rules: [{name: a, kind: fallback_rate, severity: page, window: 5m, threshold: 25%}]}", valid: true},
			{path: "alerts", value: "{rules: [{name: a, kind: ttft_penalty, severity: warn, window: 5m, threshold: 2}]}", valid: true},
			{path: "alerts", value: "{rules: [{name: a, kind: nope, severity: warn, window: 5m, threshold: 2}]}"},
			{path: "alerts", value: "{rules: [{name: a, kind: fallback_rate, severity: page, window: 5m, threshold: lots}]}"},
			{path: "providers.0.api_key", value: "[sk-1]"},
			{path: "routes.0.targts", value: "[]"},
			{path: "cache", value: "{ttl: 10m, max_stale: 24h}", valid: true},
			{path: "cache", value: "{ttl: 10}"},
			{path: "seed", value: "-1"},
			{path: "routes", del: true},
			{path: "providers.0.name", del: true},
			{path: "providers.0.kind", del: true},
			{path: "providers.0.kind", value: "grpc"},
			{path: "providers.0.protocol", value: "h2c", valid: true},
			{path: "providers.0.protocol", value: "h3"},
			{path: "policy", value: "{retry_budget: {on_exhausted: fail_fast}}", valid: true},
			{path: "policy", value: "{retry_budget: {on_exhausted: panic}}"},
			{path: "alerts", value: "{rules: [{kind: fallback_rate, severity: page, window: 5m, threshold: 25%}]}"},
		},
		"scenario": {
			{path: "traffic.0.rate", value: "600/m", valid: true},
			{path: "traffic.0.rate", value: "20", valid: true},
			{path: "traffic.0.rate", value: "20/d"},
			{path: "traffic.0.rate", value: "fast"},
			{path: "traffic.0.stream", value: "50%", valid: true},
			{path: "traffic.0.stream", value: "2"},
			{path: "timeline", value: "[{name: x, at: 10s, for: 0, target: openai/gpt-4o, fault: {kind: http_error, status: 503}}]", valid: true},
			{path: "timeline", value: "[{name: x, at: 10s, target: openai/gpt-4o, fault: {kind: stall, after: 10, for: 5s}}]", valid: true},
			{path: "timeline", value: "[{name: x, at: 10s, target: openai/gpt-4o, fault: {kind: stall, status: 500}}]"},
			{path: "timeline", value: "[{name: x, at: 10s, target: openai/gpt-4o, fault: {kind: http_error, satus: 500}}]"},
			{path: "timeline", value: "[{name: x, at: soon, kill: openai}]"},
			{path: "expect", value: "{availability: {min: 99%}, ttd: {max: 10s}, targets: {openai/gpt-4o: {share: {max: 100%}}}}", valid: true},
			{path: "expect", value: "{ttd: {max: 10}}"},
			{path: "expect", value: "{availabilty: {min: 99%}}"},
			{path: "stop_when", value: "{success_rate_below: 50%, for: 30s}", valid: true},
			{path: "providers.inline.0.models.0.ttft", value: "{median: 400ms, p99: 2s}", valid: true},
			{path: "providers.inline.0.models.0.ttft", value: "{median: 400ms, p99: 2s, p50: 1s}"},
			{path: "gateway.routes.0.targets.0.timeouts", value: "{first_token: 2s}", valid: true},
			{path: "gateway.routes.0.targets.0.timeout", value: "{first_token: 2s}"},
			{path: "duration", value: "an hour"},
			{path: "durations", value: "1h"},
			{path: "timeline", value: "[{name: x, target: openai/gpt-4o, fault: {kind: reset}}]", valid: true},
			{path: "timeline", value: "[{at: 5s, target: openai/gpt-4o, fault: {kind: reset}}]"},
			{path: "traffic.0.route", del: true},
			{path: "name", del: true},
			{path: "duration", del: true},
			{path: "providers", del: true},
			{path: "gateway", del: true},
			{path: "traffic", del: true},
		},
	}
	for kind, muts := range cases {
		base, err := os.ReadFile(filepath.Join("testdata", kind+".yaml"))
		require.NoError(t, err)
		sch := compile(t, kind)
		sch7 := compileAs(t, kind, jsonschema.Draft7)
		load := loaders[kind]
		file := filepath.Join("testdata", kind+".yaml")
		t.Run(kind+"/base", func(t *testing.T) {
			require.NoError(t, load(file, base))
			require.NoError(t, sch.Validate(yamlAsJSON(t, base)))
		})
		for _, m := range muts {
			name := fmt.Sprintf("%s/%s=%s", kind, m.path, m.value)
			if m.del {
				name = kind + "/delete " + m.path
			}
			t.Run(name, func(t *testing.T) {
				src := mutate(t, base, m)
				loadErr := load(file, src)
				doc := yamlAsJSON(t, src)
				schemaErr, schema7Err := sch.Validate(doc), sch7.Validate(doc)
				if m.valid {
					require.NoError(t, loadErr, "loader")
					require.NoError(t, schemaErr, "schema")
					require.NoError(t, schema7Err, "schema as draft-07")
				} else {
					require.Error(t, loadErr, "loader accepted it")
					require.Error(t, schemaErr, "schema accepted it")
					require.Error(t, schema7Err, "schema as draft-07 accepted it")
				}
			})
		}
	}
}

// mutate returns base with m applied, as YAML.
func mutate(t *testing.T, base []byte, m mutation) []byte {
	t.Helper()
	var doc any
	require.NoError(t, yaml.Unmarshal(base, &doc))
	var val any
	if !m.del {
		require.NoError(t, yaml.Unmarshal([]byte(m.value), &val))
	}
	keys := strings.Split(m.path, ".")
	cur := doc
	for i, k := range keys {
		last := i == len(keys)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if m.del {
					delete(c, k)
				} else {
					c[k] = val
				}
				break
			}
			if c[k] == nil {
				c[k] = map[string]any{}
			}
			cur = c[k]
		case []any:
			n, err := strconv.Atoi(k)
			require.NoError(t, err, "%s: %s indexes a list", m.path, k)
			require.Less(t, n, len(c), m.path)
			if last {
				c[n] = val
				break
			}
			cur = c[n]
		default:
			t.Fatalf("%s: %s is not in the base file", m.path, k)
		}
	}
	out, err := yaml.Marshal(doc)
	require.NoError(t, err)
	return out
}
