package control_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

// TestControlRefusesFaultsThatCannotFire: POST /_mock/faults answers 400
// with the reason, and activates nothing, for a fault whose selector can
// never match this mock and for bodies that would be half-read.
func TestControlRefusesFaultsThatCannotFire(t *testing.T) {
	p := mockprovider.StartTest(t, mockprovider.ProviderSpec{
		Name: "openai", Format: llm.FormatOpenAI,
		Models: []mockprovider.ModelSpec{{Name: "gpt-4o"}, {Name: "gpt-4o-mini"}},
	})
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"another provider", `{"kind":"reset","provider":"anthropic"}`, 400, `provider: "anthropic" can never match: this mock is provider "openai"`},
		{"a model it does not serve", `{"kind":"reset","model":"gpt-5"}`, 400, `model: "gpt-5" matches none of the models this mock serves (gpt-4o, gpt-4o-mini)`},
		{"a glob that matches nothing", `{"kind":"reset","model":"claude-*"}`, 400, `model: "claude-*" matches none`},
		{"one bad fault of a list", `[{"kind":"reset"},{"kind":"reset","model":"gpt-5"}]`, 400, `fault 1: model: "gpt-5"`},
		{"an empty list", `[]`, 400, "empty list"},
		{"two JSON objects", `{"kind":"reset"}{"kind":"cut","after":5}`, 400, "more than one JSON value (the second at byte 17)"},
		{"its own provider", `{"kind":"reset","provider":"openai"}`, 201, `"ids"`},
		{"a glob that matches", `{"kind":"reset","model":"gpt-4o*"}`, 201, `"ids"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(p.URL+"/_mock/faults", "application/json", strings.NewReader(tc.body))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode, string(body))
			if tc.status != 400 {
				assert.Contains(t, string(body), tc.want)
			} else {
				var ce mockprovider.ControlError
				require.NoError(t, json.Unmarshal(body, &ce))
				assert.Contains(t, ce.Error, tc.want)
				var active []json.RawMessage
				r, err := http.Get(p.URL + "/_mock/faults")
				require.NoError(t, err)
				require.NoError(t, json.NewDecoder(r.Body).Decode(&active))
				r.Body.Close()
				assert.Empty(t, active, "a refused request activates nothing")
			}
			r, _ := http.NewRequest("DELETE", p.URL+"/_mock/faults", nil)
			if resp, err := http.DefaultClient.Do(r); err == nil {
				resp.Body.Close()
			}
		})
	}
}
