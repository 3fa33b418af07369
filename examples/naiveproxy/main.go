// Command naiveproxy is the other contestant of the example bake-off
// (examples/gamedays/bakeoff-429-storm.yaml): the kind of LLM gateway many
// teams start with. It forwards OpenAI chat completions to its upstreams
// in order, retrying each a fixed number of times on any failure, with no
// breaker, no backoff, no memory between requests and no check of what it
// streams back: every request pays for the same failing primary again.
//
//	go run ./examples/naiveproxy -listen 127.0.0.1:18090 \
//	    -upstream http://127.0.0.1:19301/v1=gpt-4o \
//	    -upstream http://127.0.0.1:19301/v1=gpt-4o-mini
//
// It forwards the client's X-Request-Id (so the mocks' journals tie its
// attempts to user requests) and sends the answer back as the upstream
// wrote it, model field included.
//
// -drop-on-fallback response_format (comma-separated fields) removes those
// request fields when a later upstream is tried, as gateways do that strip
// what they think a fallback model may not take: its structured requests
// are then answered in prose by the fallback, with a 200 OK
// (examples/gamedays/bakeoff-structured-fallback.yaml).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// upstream is one place to send a request: an OpenAI-compatible base URL
// and the model to ask it for.
type upstream struct {
	base, model string
}

// proxy is the naive gateway.
type proxy struct {
	upstreams []upstream
	retries   int
	// drop are the request fields removed for every upstream after the
	// first (-drop-on-fallback).
	drop   []string
	key    string
	client *http.Client
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "only POST /v1/chat/completions")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not a JSON object")
		return
	}
	for i, up := range p.upstreams {
		body["model"] = up.model
		if i > 0 {
			for _, f := range p.drop {
				delete(body, f)
			}
		}
		b, err := json.Marshal(body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "the body cannot be re-encoded")
			return
		}
		for try := 0; try <= p.retries; try++ {
			if p.forward(w, r, up, b) {
				return
			}
		}
	}
	writeError(w, http.StatusBadGateway, "every upstream failed")
}

// forward sends one attempt; it reports whether the answer (a 2xx) went
// to the client. Anything else is a failure to retry.
func (p *proxy) forward(w http.ResponseWriter, r *http.Request, up upstream, body []byte) bool {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, up.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.key)
	if id := r.Header.Get("X-Request-Id"); id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	res, err := p.client.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
		return false
	}
	w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
	w.WriteHeader(res.StatusCode)
	// Streams are passed on as they arrive; a stream cut mid-answer is
	// the client's problem (naive, as promised).
	_, _ = io.Copy(flushWriter{w}, res.Body)
	return true
}

// flushWriter flushes after every write, so a stream reaches the client
// token by token.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": msg, "type": "proxy_error"}})
}

// upstreamFlags collects -upstream BASE_URL=MODEL, in order.
type upstreamFlags []upstream

func (u *upstreamFlags) String() string { return fmt.Sprint(*u) }

func (u *upstreamFlags) Set(v string) error {
	i := strings.LastIndex(v, "=")
	if i <= 0 || i == len(v)-1 {
		return errors.New("want BASE_URL=MODEL, e.g. http://127.0.0.1:19301/v1=gpt-4o")
	}
	*u = append(*u, upstream{base: strings.TrimSuffix(v[:i], "/"), model: v[i+1:]})
	return nil
}

func main() {
	var ups upstreamFlags
	listen := flag.String("listen", "127.0.0.1:18090", "address to serve on")
	retries := flag.Int("retries", 2, "retries of each upstream after its first attempt")
	drop := flag.String("drop-on-fallback", "", "request fields to remove when a later upstream is tried, comma-separated (e.g. response_format)")
	flag.Var(&ups, "upstream", "BASE_URL=MODEL, tried in the order given (repeat)")
	flag.Parse()
	if len(ups) == 0 {
		fmt.Fprintln(os.Stderr, "naiveproxy: at least one -upstream is required")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("naiveproxy on http://%s, upstreams %v, %d retries each", ln.Addr(), ups, *retries)
	p := newProxy(ups, *retries, os.Getenv("NAIVEPROXY_UPSTREAM_KEY"))
	if *drop != "" {
		p.drop = strings.Split(*drop, ",")
	}
	log.Fatal(serve(ln, p))
}

func newProxy(ups []upstream, retries int, key string) *proxy {
	if key == "" {
		key = "mock-key"
	}
	return &proxy{upstreams: ups, retries: retries, key: key,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}}
}

func serve(ln net.Listener, p *proxy) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
