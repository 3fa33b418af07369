package gateway_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
)

func exampleEnv(k string) (string, bool) {
	return map[string]string{
		"BROWNOUT_ADMIN_TOKEN": "admin-secret", "OPENAI_API_KEY": "sk-openai-secret",
		"ANTHROPIC_API_KEY": "sk-ant-secret", "GEMINI_API_KEY": "gm-secret",
		"ALERT_WEBHOOK_URL": "https://hooks.example.com/T000/secret-path",
		"AZURE_OPENAI_KEY":  "az-secret", "WEB_APP_KEY": "web-app-client-key-0123", "BATCH_JOBS_KEY": "batch-client-key-0123",
	}[k], true
}

// TestExampleConfig: the shipped example is valid and builds a gateway.
func TestExampleConfig(t *testing.T) {
	cfg, err := gateway.LoadConfig("../examples/gateway/failover.yaml", gateway.LoadOptions{LookupEnv: exampleEnv})
	require.NoError(t, err)
	assert.Len(t, cfg.Providers, 3)
	assert.Len(t, cfg.Routes, 2)
	assert.Equal(t, "sk-ant-secret", cfg.Providers[1].APIKey.Value())
	assert.Equal(t, "127.0.0.1:8080", cfg.ListenAddr())
	cfg.Usage.File = ""
	srv, err := gateway.New(cfg, gateway.Options{Logger: discardLogger()})
	require.NoError(t, err)
	require.NoError(t, srv.Close())
}

// TestExampleConfigs: every shipped gateway example is valid.
func TestExampleConfigs(t *testing.T) {
	files, err := filepath.Glob("../examples/gateway/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 2)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := gateway.LoadConfig(f, gateway.LoadOptions{LookupEnv: exampleEnv})
			require.NoError(t, err)
			assert.NotEmpty(t, cfg.Routes)
		})
	}
}
