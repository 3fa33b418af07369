package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// rss returns the process's resident set size (0 where /proc is missing).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n << 10
		}
	}
	return 0
}

// TestInflightByteBudget: 30 concurrent requests with 8 MiB bodies, each
// within every per-request limit, against a 160 MiB byte budget: those
// beyond it are refused with 503 and Retry-After in the API's shape before
// their bodies are read, the others are served, and the heap grows by
// about the budget, not by 30 requests' worth. The heap and RSS figures
// are logged (go test -v -run TestInflightByteBudget ./gateway; with no
// budget the same load grew the heap by ~620 MiB, RSS 57 -> 678 MiB).
func TestInflightByteBudget(t *testing.T) {
	const budget = 160 << 20
	m := startMocks(t)
	cfg := trustConfig(t, m, "limits: {max_inflight_bytes: "+strconv.Itoa(budget)+"}\n")
	g := startGateway(t, cfg, gateway.Options{Logger: discardLogger(), Transport: cannedOK{}})
	body := `{"model":"chat","messages":[{"role":"user","content":"` + strings.Repeat("x", gateway.DefaultMaxBodyBytes-200) + `"}]}`
	const clients = 30
	statuses := make([]int, clients)
	var wg sync.WaitGroup
	rss0 := rss()
	grew := heapGrowth(func() {
		for i := range clients {
			wg.Go(func() {
				req, err := http.NewRequest(http.MethodPost, g.url+"/v1/chat/completions", strings.NewReader(body))
				if err != nil {
					return
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					statuses[i] = -1 // refused while the body was still being sent
					return
				}
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				statuses[i] = resp.StatusCode
				if resp.StatusCode == 503 {
					assert.NotEmpty(t, resp.Header.Get("Retry-After"))
					assert.Contains(t, string(b), "max_inflight_bytes")
				}
			})
		}
		wg.Wait()
	})
	rss1 := rss()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	t.Logf("30 × %.1f MiB bodies, budget %d MiB: statuses %v; peak heap growth %.0f MiB; RSS %.0f -> %.0f MiB",
		float64(len(body))/(1<<20), budget>>20, count, float64(grew)/(1<<20), float64(rss0)/(1<<20), float64(rss1)/(1<<20))
	require.Positive(t, count[200], "some are served")
	require.Positive(t, count[503]+count[-1], "some are refused")
	require.Zero(t, clients-count[200]-count[503]-count[-1], "only 200 and 503")
	// The budget plus what is not request memory (the test's own client,
	// the answers): never 30 requests' worth (30 × ~20 MiB measured).
	require.Less(t, grew, uint64(budget+64<<20))
}

// TestHeldAnswerCountsInByteBudget: a stream's answer held by the gateway
// (for continuation) counts against the byte budget: while a 6 MiB answer
// is held, a new request is refused with 503; once it ends, served.
func TestHeldAnswerCountsInByteBudget(t *testing.T) {
	release := make(chan struct{})
	chunk := strings.Repeat("z", 64<<10)
	up := heldUpstream(t, func(w http.ResponseWriter) {
		for range 96 { // 6 MiB of text
			_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`+chunk+`"},"finish_reason":null}]}`+"\n\n")
		}
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})
	t.Cleanup(func() { closeOnce(release) })
	g := heldStreamGateway(t, up.URL, 4<<20)

	resp := post(t, g.url, "/v1/chat/completions", openaiBody(true), nil)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	got := 0
	buf := make([]byte, 64<<10)
	for got < 6<<20 { // the answer so far has reached the client: the gateway holds it
		n, err := resp.Body.Read(buf)
		got += n
		require.NoError(t, err)
	}
	status, h, body := send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
	require.Equal(t, 503, status, body)
	require.NotEmpty(t, h.Get("Retry-After"))

	closeOnce(release)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Eventually(t, func() bool {
		status, _, _ := send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
		return status == 200
	}, 5*time.Second, 10*time.Millisecond, "the held answer was given back")
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// TestStreamEventChargedWhileArriving: a stream's event buffers count
// against the byte budget while the event is still arriving. An upstream
// sends a first token, then ~600 KiB of one event without its blank line,
// and holds: while it holds, the gateway's in-flight bytes grow by the
// event's copies (gateway.EventCopies times its size, at least the
// event), a request beyond the budget is refused with 503 and
// Retry-After, and once the stream ends the budget is back to its
// level before and a new request is served.
func TestStreamEventChargedWhileArriving(t *testing.T) {
	const eventSize = 600 << 10
	release := make(chan struct{})
	sent := make(chan struct{})
	up := heldUpstream(t, func(w http.ResponseWriter) {
		const head = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`
		const tail = `"},"finish_reason":null}]}` + "\n\n"
		_, _ = io.WriteString(w, head+"first"+tail)
		_, _ = io.WriteString(w, head+strings.Repeat("z", eventSize)) // the event, unfinished
		w.(http.Flusher).Flush()
		closeOnce(sent)
		<-release
		_, _ = io.WriteString(w, tail+`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})
	t.Cleanup(func() { closeOnce(release) })
	// 1 MiB: a few streams of small events fit (each takes tens of KiB),
	// one with the event above in progress does not leave room.
	g := heldStreamGateway(t, up.URL, 1<<20)
	const inflight = "brownout_inflight_bytes"
	before := metricValue(t, g, inflight)

	resp := post(t, g.url, "/v1/chat/completions", openaiBody(true), nil)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream did not send the event")
	}
	// The whole event, as its copies (gateway.EventCopies), and more than
	// the event itself.
	require.Eventually(t, func() bool {
		return metricValue(t, g, inflight)-before >= gateway.EventCopies*eventSize
	}, 10*time.Second, 5*time.Millisecond, "the event in progress is charged")

	status, h, body := send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
	require.Equal(t, 503, status, body)
	require.NotEmpty(t, h.Get("Retry-After"))

	closeOnce(release)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(got), "[DONE]")
	require.Eventually(t, func() bool {
		return metricValue(t, g, inflight) == before
	}, 10*time.Second, 5*time.Millisecond, "the stream's bytes were given back")
	status, _, body = send(t, g.url, "/v1/chat/completions", openaiBody(false), nil)
	require.Equal(t, 200, status, body)
}

// heldStreamGateway is a gateway whose only route streams from the
// upstream at url, with patient timeouts (tests hold streams open), no
// detectors and an in-flight byte budget of budget bytes.
func heldStreamGateway(t *testing.T, url string, budget int) *gw {
	t.Helper()
	cfg, err := gateway.ParseConfig("held.yaml", []byte(`version: 1
providers:
  - {name: p, kind: openai, base_url: "`+url+`/v1"}
routes:
  - name: chat
    targets: [{provider: p, model: m, timeouts: {idle: 30s, total: 60s}}]
cache: {max_entries: -1}
detectors: {disable: true}
limits: {max_inflight_bytes: `+strconv.Itoa(budget)+`}
`), gateway.LoadOptions{})
	require.NoError(t, err)
	return startGateway(t, cfg, gateway.Options{Logger: discardLogger()})
}

// heldUpstream is an OpenAI upstream that answers a non-streamed request
// at once and hands a streamed one to stream (its Content-Type set).
func heldUpstream(t *testing.T, stream func(w http.ResponseWriter)) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if !strings.Contains(r.Header.Get("Accept"), "event-stream") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		stream(w)
	}))
	t.Cleanup(up.Close)
	return up
}
