package gateway_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/brownout-dev/brownout/gateway"
)

// syncBuffer is a bytes.Buffer for a logger written from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestGeminiClientKeys: the genai SDK, with a key limited to route chat
// presented its own way (x-goog-api-key), is admitted on chat by the route
// in the path and refused on other; ?key= works too; the key is in no log
// line.
func TestGeminiClientKeys(t *testing.T) {
	ctx := context.Background()
	m := startMocks(t)
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g := startGateway(t, trustConfig(t, m, clientsYAML), gateway.Options{Logger: logger})

	var seen []string // the key headers the SDK sent
	var mu sync.Mutex
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: keyApp, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: g.url}, HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			seen = append(seen, r.Header.Get("X-Goog-Api-Key"), r.Header.Get("Authorization"), r.URL.Query().Get("key"))
			mu.Unlock()
			return http.DefaultTransport.RoundTrip(r)
		})}})
	require.NoError(t, err)

	resp, err := c.Models.GenerateContent(ctx, "chat", genai.Text("hello"), nil)
	require.NoError(t, err)
	require.NotEmpty(t, resp.Text())
	require.Equal(t, []string{keyApp, "", ""}, seen, "the SDK presents its key as x-goog-api-key")

	text := ""
	for chunk, err := range c.Models.GenerateContentStream(ctx, "chat", genai.Text("hello"), nil) {
		require.NoError(t, err)
		text += chunk.Text()
	}
	require.NotEmpty(t, text)

	_, err = c.Models.GenerateContent(ctx, "other", genai.Text("hello"), nil)
	var ae genai.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 403, ae.Code, "app may not use route other: %v", err)

	// A wrong key is a 401 in Gemini's shape.
	bad, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "ck-wrong-0123456789abcdef", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: g.url}})
	require.NoError(t, err)
	_, err = bad.Models.GenerateContent(ctx, "chat", genai.Text("hello"), nil)
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 401, ae.Code)

	// ?key= (the REST API's other way), on the Gemini API only.
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	status, _, b := send(t, g.url, "/v1beta/models/chat:generateContent?key="+keyApp, body, nil)
	require.Equal(t, 200, status, b)
	status, _, b = send(t, g.url, "/v1beta/models/other:generateContent?key="+keyApp, body, nil)
	require.Equal(t, 403, status, b)
	status, _, _ = send(t, g.url, "/v1/chat/completions?key="+keyApp, openaiBody(false), nil)
	require.Equal(t, 401, status, "a key in the query is the Gemini API's only")

	// Anthropic's x-api-key, on its own API.
	status, _, b = send(t, g.url, "/v1/messages", anthropicBody(false), map[string]string{"x-api-key": keyApp, "anthropic-version": "2023-06-01"})
	require.Equal(t, 200, status, b)

	require.NotContains(t, logs.String(), keyApp)
	for _, ev := range g.log.Events() {
		require.NotContains(t, ev.Reason, keyApp)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
