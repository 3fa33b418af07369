package gateway_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
)

const minimalConfig = `version: 1
providers:
  - name: openai
    kind: openai
    api_key: ${OPENAI_API_KEY}
routes:
  - name: chat
    targets:
      - {provider: openai, model: gpt-4o}
`

func env(vars map[string]string) gateway.LoadOptions {
	return gateway.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}}
}

func TestConfigErrors(t *testing.T) {
	secretEnv := map[string]string{"OPENAI_API_KEY": "sk-very-secret"}
	tests := []struct {
		name string
		yaml string
		want string // file:line:col and message fragment
	}{
		{"unknown field", strings.Replace(minimalConfig, "    kind: openai\n", "    kind: openai\n    bogus: 1\n", 1), "gw.yaml:5:5: bogus: unknown field"},
		{"wrong version", strings.Replace(minimalConfig, "version: 1", "version: 2", 1), "gw.yaml:1:10: version: must be 1"},
		{"unknown kind", strings.Replace(minimalConfig, "kind: openai", "kind: openia", 1), `gw.yaml:4:11: providers.0.kind: unknown kind "openia"`},
		{"unset env var", strings.Replace(minimalConfig, "OPENAI_API_KEY", "MISSING_KEY", 1), "gw.yaml:5:14: providers.0.api_key: environment variable MISSING_KEY is not set"},
		{"malformed reference", strings.Replace(minimalConfig, "${OPENAI_API_KEY}", "${OPENAI-KEY}", 1), "providers.0.api_key: malformed ${...} reference"},
		{"unknown provider", strings.Replace(minimalConfig, "{provider: openai,", "{provider: opnai,", 1), `gw.yaml:9:20: routes.0.targets.0.provider: unknown provider "opnai"`},
		{"azure needs api_version", strings.Replace(minimalConfig, "kind: openai", "kind: azure\n    base_url: https://x.openai.azure.com", 1), "providers.0.api_version: required for kind azure"},
		{"bad duration", minimalConfig + "shutdown: {drain: 30}\n", "gw.yaml:10:19: shutdown.drain: invalid duration"},
		{"bad alert rule", minimalConfig + "alerts:\n  rules:\n    - {name: x, kind: fallback_rate, severity: warn, window: 5m, threshold: 150%}\n", "gw.yaml:12:"},
		{"alert threshold percent", minimalConfig + "alerts:\n  rules:\n    - {name: x, kind: fallback_rate, severity: loud, window: 5m, threshold: 5%}\n", `alerts.rules.0.severity: "loud" is not warn or page`},
		{"webhook without url", minimalConfig + "alerts:\n  sinks:\n    - {name: hook, kind: webhook}\n", "alerts.sinks.0.url"},
		{"duplicate provider", strings.Replace(minimalConfig, "routes:", "  - {name: openai, kind: anthropic}\nroutes:", 1), `providers.1.name: duplicate provider "openai"`},
		{"unknown store policy", minimalConfig + "state: {backend: redis, url: \"redis://127.0.0.1:6379/0\", on_store_unavailable: fail_open}\n", `state.on_store_unavailable: unknown policy "fail_open" (local or fail_closed)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gateway.ParseConfig("gw.yaml", []byte(tt.yaml), env(secretEnv))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "sk-very-secret")
		})
	}
}

// TestSecretsNeverPrint: a resolved key does not appear when the config is
// printed, marshalled or logged.
func TestSecretsNeverPrint(t *testing.T) {
	cfg, err := gateway.ParseConfig("gw.yaml", []byte(minimalConfig), env(map[string]string{"OPENAI_API_KEY": "sk-very-secret"}))
	require.NoError(t, err)
	require.Equal(t, "sk-very-secret", cfg.Providers[0].APIKey.Value())
	var outputs []string
	outputs = append(outputs, fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprint(cfg.Providers[0].APIKey))
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	outputs = append(outputs, string(b))
	var logBuf strings.Builder
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("config", "cfg", cfg, "key", cfg.Providers[0].APIKey)
	outputs = append(outputs, logBuf.String())
	for _, o := range outputs {
		assert.NotContains(t, o, "sk-very-secret")
	}
	assert.Contains(t, string(b), gateway.Redacted)
}
