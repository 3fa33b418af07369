package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
)

// cannedOK answers every upstream request with a short OpenAI completion,
// after reading the request: the memory measured is the gateway's alone.
type cannedOK struct{}

func (cannedOK) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	body := `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
}

// The memory a request in flight costs at the default limits (the largest
// body, the most messages), measured as the live heap's peak growth with a
// few such requests at once. The figure is logged (go test -v -run
// TestMemoryAtLimits ./gateway); the bound asserted is the one the limits
// promise: the decoded-size limit plus a few copies of the body.
func TestMemoryAtLimits(t *testing.T) {
	m := startMocks(t)
	g := startGateway(t, trustConfig(t, m, ""), gateway.Options{Logger: discardLogger(), Transport: cannedOK{}})
	const inFlight = 4
	rep := func(s string, n int) string { return strings.TrimSuffix(strings.Repeat(s+",", n), ",") }
	text := strings.Repeat("x", gateway.DefaultMaxBodyBytes-200)
	msg := `{"role":"user","content":"` + strings.Repeat("y", gateway.DefaultMaxBodyBytes/gateway.DefaultMaxMessages-40) + `"}`
	for _, c := range []struct{ name, body string }{
		{"largest body", `{"model":"chat","messages":[{"role":"user","content":"` + text + `"}]}`},
		{"most messages", `{"model":"chat","messages":[` + rep(msg, gateway.DefaultMaxMessages) + `]}`},
	} {
		require.LessOrEqual(t, len(c.body), gateway.DefaultMaxBodyBytes, c.name)
		var wg sync.WaitGroup
		statuses := make([]int, inFlight)
		grew := heapGrowth(func() {
			for i := range inFlight {
				wg.Go(func() {
					resp := post(t, g.url, "/v1/chat/completions", c.body, nil)
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					statuses[i] = resp.StatusCode
				})
			}
			wg.Wait()
		})
		per := grew / inFlight
		t.Logf("%s: body %.1f MiB, peak heap growth per in-flight request %.1f MiB", c.name, float64(len(c.body))/(1<<20), float64(per)/(1<<20))
		for _, s := range statuses {
			require.Equal(t, 200, s, c.name)
		}
		require.Less(t, per, uint64(gateway.DefaultMaxDecodedBytes+4*gateway.DefaultMaxBodyBytes), c.name)
	}
}
