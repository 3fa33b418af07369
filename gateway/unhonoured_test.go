package gateway_test

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
)

// TestUnhonouredFields: a field only the client's format knows (Anthropic's
// thinking) is never dropped without a word (it once was, on an Anthropic
// route served by an OpenAI primary): the primary is skipped, naming the
// field, and the Anthropic target serves; with best effort the primary
// serves without it and the response names what was dropped; when no
// target can honour a field (Responses reasoning on a route with no
// Responses target) the client gets the 400 naming it.
func TestUnhonouredFields(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, m.config(t, ""), gateway.Options{})
	thinking := `{"model":"chat","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"think first"}]}`

	t.Run("skipped to a capable target", func(t *testing.T) {
		resp := post(t, g.url, "/v1/messages", thinking, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, string(body))
		assert.Equal(t, "beta:claude-sonnet", resp.Header.Get(gateway.HeaderTarget))
		assert.Empty(t, resp.Header.Get(gateway.HeaderDropped))
		var skipped []events.Event
		for _, e := range g.log.Events() {
			if e.Kind == events.AttemptEnd && e.Class == "skipped" {
				skipped = append(skipped, e)
			}
		}
		require.Len(t, skipped, 1)
		assert.Equal(t, "alpha:gpt-4o", skipped[0].Target)
		assert.Contains(t, skipped[0].Reason, "thinking")
		assert.Zero(t, m.alpha.Model().JournalLen(), "nothing was sent to the skipped target")
	})

	t.Run("a null field is no field", func(t *testing.T) {
		resp := post(t, g.url, "/v1/messages", `{"model":"chat","max_tokens":64,"thinking":null,"messages":[{"role":"user","content":"hi"}]}`, nil)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, "alpha:gpt-4o", resp.Header.Get(gateway.HeaderTarget))
	})

	t.Run("best effort drops and says so", func(t *testing.T) {
		resp := post(t, g.url, "/v1/messages", thinking, map[string]string{gateway.HeaderBestEffort: "drop"})
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, string(body))
		assert.Equal(t, "alpha:gpt-4o", resp.Header.Get(gateway.HeaderTarget))
		assert.Equal(t, "thinking", resp.Header.Get(gateway.HeaderDropped))
	})

	t.Run("no capable target is a 400 naming the field", func(t *testing.T) {
		resp := post(t, g.url, "/v1/responses", `{"model":"chat","input":"hi","reasoning":{"effort":"high"}}`, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 400, resp.StatusCode, string(body))
		var e struct {
			Error struct {
				Type, Param, Message string
			}
		}
		require.NoError(t, json.Unmarshal(body, &e), string(body))
		assert.Equal(t, "invalid_request_error", e.Error.Type)
		assert.Equal(t, "reasoning", e.Error.Param)
		assert.Contains(t, e.Error.Message, gateway.HeaderBestEffort)
	})

	t.Run("previous_response_id is refused, not ignored", func(t *testing.T) {
		sent := func() int {
			return m.alpha.Model().JournalLen() + m.beta.Model().JournalLen() + m.gamma.Model().JournalLen()
		}
		before := sent()
		resp := post(t, g.url, "/v1/responses", `{"model":"chat","input":"and then?","previous_response_id":"resp_unknown"}`, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 400, resp.StatusCode, string(body))
		assert.JSONEq(t, `{"error":{"message":"Previous response with id 'resp_unknown' not found.","type":"invalid_request_error",
			"param":"previous_response_id","code":"previous_response_not_found"}}`, string(body))
		assert.Equal(t, before, sent(), "nothing was sent upstream")
	})
}
