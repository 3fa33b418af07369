package policy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
)

func TestTargetRequest(t *testing.T) {
	temp, seed := 0.7, int64(3)
	base := &llm.Request{Model: "chat", Temperature: &temp, Seed: &seed, MaxTokens: 100,
		Extra: map[string]json.RawMessage{"logprobs": json.RawMessage(`true`)}}
	tests := []struct {
		name   string
		target Target
		check  func(t *testing.T, r *llm.Request)
		errMsg string
	}{
		{"model only", Target{Model: "gpt-4o"}, func(t *testing.T, r *llm.Request) {
			assert.Equal(t, "gpt-4o", r.Model)
			assert.Same(t, base.Temperature, r.Temperature)
		}, ""},
		{"drop known and extra params", Target{Model: "m", DropParams: []string{"seed", "logprobs", "temperature"}}, func(t *testing.T, r *llm.Request) {
			assert.Nil(t, r.Seed)
			assert.Nil(t, r.Temperature)
			assert.NotContains(t, r.Extra, "logprobs")
		}, ""},
		{"override", Target{Model: "m", OverrideParams: map[string]any{"max_tokens": 1024, "temperature": 0.1, "service_tier": "flex", "thinking": map[string]any{"type": "enabled"}}}, func(t *testing.T, r *llm.Request) {
			assert.Equal(t, 1024, r.MaxTokens)
			assert.Equal(t, 0.1, *r.Temperature)
			assert.JSONEq(t, `"flex"`, string(r.Extra["service_tier"]))
			assert.JSONEq(t, `{"type":"enabled"}`, string(r.Extra["thinking"]))
		}, ""},
		{"bad override", Target{Model: "m", OverrideParams: map[string]any{"temperature": "hot"}}, nil, "override_params.temperature: must be a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.target.Request(base)
			if tt.errMsg != "" {
				require.ErrorContains(t, err, tt.errMsg)
				return
			}
			require.NoError(t, err)
			tt.check(t, r)
			// The inbound request is never modified (it may be resent to
			// another target).
			assert.Equal(t, "chat", base.Model)
			assert.Equal(t, 0.7, *base.Temperature)
			assert.Contains(t, base.Extra, "logprobs")
		})
	}
}
