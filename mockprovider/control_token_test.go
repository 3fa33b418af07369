package mockprovider_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
)

func TestControlToken(t *testing.T) {
	p, err := mockprovider.Start(mockprovider.ProviderSpec{Name: "p", Format: llm.FormatOpenAI,
		Models: []mockprovider.ModelSpec{{Name: "m"}}}, mockprovider.Options{ServerOptions: mockprovider.ServerOptions{ControlToken: "mock-token-123"}})
	require.NoError(t, err)
	t.Cleanup(p.Close)
	require.False(t, p.Exposed(), "a loopback mock is not exposed")
	for _, c := range []struct {
		auth   string
		status int
	}{{"", 401}, {"Bearer wrong", 401}, {"mock-token-123", 401}, {"Bearer mock-token-123", 200}} {
		req, err := http.NewRequest(http.MethodGet, p.URL+"/_mock/stats", nil)
		require.NoError(t, err)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, c.status, resp.StatusCode, c.auth)
	}
}
