package gateway_test

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/gateway"
)

// smuggled runs the smuggling probe against a gateway on transport tr (nil:
// the gateway's own, whose ReuseQuiet is quiet): an upstream that writes an
// extra answer ("INJECTED k") 30 ms after each real one, and a pool of
// victims sending requests at once. It returns how many victims were
// served an extra answer that the upstream sent within quiet of the real
// one (the quiet rule's promise: none), how many were served one sent
// later (a loaded machine can delay the upstream's 30 ms past quiet; the
// rule cannot tell such an answer from a real one), and how many requests
// failed.
func smuggled(t *testing.T, tr http.RoundTripper, quiet time.Duration) (served, late, failed int) {
	return smuggledTLS(t, nil, tr, quiet)
}

// smuggledTLS is smuggled with the upstream on TLS with cfg (nil:
// cleartext).
func smuggledTLS(t *testing.T, cfg *tls.Config, tr http.RoundTripper, quiet time.Duration) (served, late, failed int) {
	var (
		mu     sync.Mutex
		delays []time.Duration // per injection: from the end of the real answer to the extra one
	)
	up := startRawTLS(t, cfg, func(n int, req *http.Request, c net.Conn) bool {
		if _, err := io.WriteString(c, answerFor(req, "real "+strconv.Itoa(n))); err != nil {
			return false
		}
		answered := time.Now()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		k := len(delays)
		delays = append(delays, time.Since(answered))
		mu.Unlock()
		_, err := io.WriteString(c, completion("INJECTED "+strconv.Itoa(k)))
		return err == nil
	})
	gcfg, err := gateway.ParseConfig("smuggle.yaml", []byte(`version: 1
providers:
  - {name: bad, kind: openai, base_url: "`+up.url+`/v1"}
routes:
  - name: chat
    targets:
      - {provider: bad, model: gpt-4o, retry: {attempts: 1}, timeouts: {first_token: 5s, idle: 5s, total: 10s}}
policy:
  breaker: {min_samples: 100000}
cache: {max_entries: -1}
`), gateway.LoadOptions{})
	require.NoError(t, err)
	g := startGateway(t, gcfg, gateway.Options{Logger: discardLogger(), Transport: tr})
	injectedRE := regexp.MustCompile(`INJECTED (\d+)`)
	var within, after, bad atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				r := g.do(t, (w+i)%2 == 1, nil)
				m := injectedRE.FindStringSubmatch(r.body + r.text)
				switch {
				case r.status != 200:
					bad.Add(1)
				case m != nil:
					k, _ := strconv.Atoi(m[1])
					mu.Lock()
					d := delays[k]
					mu.Unlock()
					if d <= quiet {
						within.Add(1)
					} else {
						after.Add(1)
						t.Logf("served extra answer %d, sent %v after its real one (quiet %v)", k, d, quiet)
					}
				}
			}
		})
	}
	wg.Wait()
	return int(within.Load()), int(after.Load()), int(bad.Load())
}

// TestUpstreamSmuggling: 200 victims on a gateway whose cleartext
// HTTP/1.1 upstream writes an extra answer 30 ms after each answer: none is
// served an extra answer sent within the default ReuseQuiet (250 ms) of
// its real one, and none fails. A cleartext connection is handed out again
// only after 250 ms without a byte (plainTransport's slots; net/http's
// read loop closes one that receives bytes while idle); net/http's own
// reuse rule served 40–66 of the 200 the extra answer.
func TestUpstreamSmuggling(t *testing.T) {
	served, _, failed := smuggled(t, nil, gateway.DefaultReuseQuiet)
	require.Zero(t, served, "smuggled answers served")
	require.Zero(t, failed, "failed requests")
}

// TestUpstreamSmugglingTLS: the same probe on an HTTP/1.1 upstream over
// TLS, whose connections are reused after ReuseQuiet (here 150 ms: past
// the upstream's 30 ms with room for a loaded machine, and short enough
// that connections are handed over while extra answers arrive): none is
// served the extra answer, none fails. An answer net/http reads on a
// connection before the request was sent on it is discarded and the
// request sent again (without that rule, 1 run in 6 served one and
// another failed a request).
func TestUpstreamSmugglingTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	cfg := srv.TLS.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	tr := gateway.NewTransport(gateway.ProtocolAuto, gateway.TransportOptions{ReuseQuiet: 150 * time.Millisecond,
		TLSConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	tr.Proxy = nil
	srv.Close()
	served, _, failed := smuggledTLS(t, cfg, tr, 150*time.Millisecond)
	require.Zero(t, served, "smuggled answers served")
	require.Zero(t, failed, "failed requests")
}
