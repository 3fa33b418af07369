package scenarios_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// naiveGateway is the black box of the black-box tests: a reverse proxy
// for OpenAI chat completions with naive retry and no memory. Each request
// goes to its upstreams in order, each tried 1+retries times (the model
// rewritten to the upstream's), until one answers 2xx; that answer is
// copied to the client as it arrives, model field and all. It forwards the
// client's X-Request-Id and records the Authorization header it receives.
type naiveGateway struct {
	url       string
	upstreams []naiveUpstream
	retries   int
	hc        *http.Client

	mu   sync.Mutex
	auth map[string]int // Authorization header values seen, counted
}

type naiveUpstream struct{ base, model string }

func startNaive(t *testing.T, retries int, upstreams ...naiveUpstream) *naiveGateway {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	g := &naiveGateway{upstreams: upstreams, retries: retries, hc: &http.Client{Transport: tr}, auth: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.url = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); tr.CloseIdleConnections() })
	return g
}

func (g *naiveGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.auth[r.Header.Get("Authorization")]++
	g.mu.Unlock()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req map[string]any
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	for _, up := range g.upstreams {
		req["model"] = up.model
		b, _ := json.Marshal(req)
		for range 1 + g.retries {
			hr, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, up.base+"/v1/chat/completions", bytes.NewReader(b))
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Authorization", "Bearer mock-key")
			hr.Header.Set("X-Request-Id", r.Header.Get("X-Request-Id"))
			res, err := g.hc.Do(hr)
			if err != nil {
				continue
			}
			if res.StatusCode/100 != 2 {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				continue
			}
			w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
			w.WriteHeader(res.StatusCode)
			buf := make([]byte, 4096)
			for {
				n, err := res.Body.Read(buf)
				if n > 0 {
					_, _ = w.Write(buf[:n])
					if f, ok := w.(http.Flusher); ok {
						f.Flush()
					}
				}
				if err != nil {
					break
				}
			}
			res.Body.Close()
			return
		}
	}
	http.Error(w, `{"error":{"message":"every upstream failed"}}`, http.StatusBadGateway)
}

// seen returns how many requests carried the Authorization value v.
func (g *naiveGateway) seen(v string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.auth[v]
}

// freePorts returns n loopback ports free a moment ago, for mocks a black
// box must be told about before they start.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

var _ = context.Background
