package gateway_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/brownout-dev/brownout/gateway"
)

// FuzzInbound runs arbitrary bodies through the full handler (trust
// boundary, decoding, the decision core, upstream attempts against loopback
// mocks) on both inbound APIs: no panic, no 5xx of the gateway's own, and
// every refusal in the API's error shape.
func FuzzInbound(f *testing.F) {
	m := startMocks(f)
	cfg, err := gateway.ParseConfig("fuzz.yaml", []byte(configText(m, `limits: {max_body_bytes: 65536, max_messages: 64, max_decoded_bytes: 1048576}
clients: [{id: app, key: "${APP_KEY}"}]
`)), gateway.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := trustEnv[k]
		return v, ok
	}})
	if err != nil {
		f.Fatal(err)
	}
	srv, err := gateway.New(cfg, gateway.Options{Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })
	h := srv.Handler()
	for _, s := range []string{openaiBody(false), openaiBody(true), anthropicBody(false), anthropicBody(true),
		`{"model":"chat","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}`,
		`{"model":"chat","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}]}`,
		`{"model":"ch\u0061t","messages":[],"stream":true}`, `{"messages":[[[[[[]]]]]]}`, `{"model":"x"`, ``, `null`} {
		f.Add(false, []byte(s), true)
		f.Add(true, []byte(s), true)
	}
	f.Add(false, []byte(openaiBody(false)), false)
	f.Fuzz(func(t *testing.T, anthropicAPI bool, body []byte, withKey bool) {
		path := "/v1/chat/completions"
		if anthropicAPI {
			path = "/v1/messages"
		}
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		if withKey {
			req.Header.Set("Authorization", "Bearer "+keyApp)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out := rec.Body.String()
		if strings.Contains(out, "internal gateway error") {
			t.Fatalf("the handler panicked on %q", body)
		}
		if rec.Code == http.StatusOK {
			return
		}
		if rec.Code == 500 {
			t.Fatalf("a 500 of the gateway's own on %q: %s", body, out)
		}
		if !withKey && rec.Code != http.StatusUnauthorized {
			t.Fatalf("no key, status %d", rec.Code)
		}
		var shape map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &shape); err != nil || shape["error"] == nil {
			t.Fatalf("status %d: not an error in the API's shape: %s", rec.Code, out)
		}
		if anthropicAPI && string(shape["type"]) != `"error"` {
			t.Fatalf("status %d: not an Anthropic error: %s", rec.Code, out)
		}
	})
}
