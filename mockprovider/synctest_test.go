package mockprovider_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// pipeListener is an in-memory listener: inside a synctest bubble the
// server's timers run on virtual time, so pacing is asserted exactly.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	a, b := net.Pipe()
	select {
	case l.conns <- a:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// arrivals streams one request through a Server on virtual time and returns
// when each content event arrived, relative to the request.
func arrivals(t *testing.T, s mockprovider.ProviderSpec) []time.Duration {
	t.Helper()
	return arrivalsWith(t, s, mockprovider.ServerOptions{})
}

func arrivalsWith(t *testing.T, s mockprovider.ProviderSpec, opts mockprovider.ServerOptions) []time.Duration {
	t.Helper()
	m, err := mockprovider.NewModel(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := mockprovider.NewServer(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln := newPipeListener()
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DialContext: ln.dial}}
	defer client.CloseIdleConnections()

	start := time.Now()
	resp, err := client.Post("http://mock/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"delta":{"content":"`) && !strings.Contains(sc.Text(), `"content":""`) {
			out = append(out, time.Since(start))
		}
	}
	return out
}

func TestPacingOnVirtualTime(t *testing.T) {
	ms := time.Millisecond
	fixed := func(d time.Duration) *faults.Latency { l := faults.Fixed(d); return &l }
	tests := []struct {
		name   string
		faults []faults.Spec
		want   []time.Duration
	}{
		{"model pacing", nil, []time.Duration{2000 * ms, 2100 * ms, 2200 * ms, 2300 * ms, 2400 * ms, 2500 * ms}},
		{"stall after 3 for 20s", []faults.Spec{{Kind: faults.KindStall, After: intp(3), For: yamlfile.Duration(20 * time.Second)}},
			[]time.Duration{2000 * ms, 2100 * ms, 2200 * ms, 22300 * ms, 22400 * ms, 22500 * ms}},
		{"ttft set to 5s", []faults.Spec{{Kind: faults.KindTTFT, Mode: "set", Delay: fixed(5 * time.Second)}},
			[]time.Duration{5000 * ms, 5100 * ms, 5200 * ms, 5300 * ms, 5400 * ms, 5500 * ms}},
		{"slow headers 3s", []faults.Spec{{Kind: faults.KindSlowHeaders, Delay: fixed(3 * time.Second)}},
			[]time.Duration{5000 * ms, 5100 * ms, 5200 * ms, 5300 * ms, 5400 * ms, 5500 * ms}},
		{"token rate 2/s", []faults.Spec{{Kind: faults.KindTokenRate, Rate: 2}},
			[]time.Duration{2000 * ms, 2500 * ms, 3000 * ms, 3500 * ms, 4000 * ms, 4500 * ms}},
		{"cut after 2", []faults.Spec{{Kind: faults.KindCut, After: intp(2)}}, []time.Duration{2000 * ms, 2100 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := spec("openai", llm.FormatOpenAI, "gpt-4o")
				s.Models[0].TTFT = faults.Fixed(2 * time.Second)
				s.Models[0].TokensPerSecond = 10
				s.Models[0].OutputTokens = mockprovider.Length{Fixed: 6}
				s.Faults = tt.faults
				got := arrivals(t, s)
				if len(got) != len(tt.want) {
					t.Fatalf("arrivals %v, want %v", got, tt.want)
				}
				for i := range tt.want {
					if got[i] != tt.want[i] {
						t.Fatalf("token %d at %v, want %v (all: %v)", i, got[i], tt.want[i], got)
					}
				}
			})
		})
	}
}

// TestProxyLiveTimingOnVirtualTime: a proxy relays a paced upstream stream
// live, adding the faults' delays to each event's arrival.
func TestProxyLiveTimingOnVirtualTime(t *testing.T) {
	ms := time.Millisecond
	fixed := faults.Fixed(2 * time.Second)
	tests := []struct {
		name   string
		faults []faults.Spec
		want   []time.Duration
	}{
		{"pass-through", nil, []time.Duration{1000 * ms, 1100 * ms, 1200 * ms, 1300 * ms}},
		{"ttft add 2s", []faults.Spec{{Kind: faults.KindTTFT, Delay: &fixed}}, []time.Duration{3000 * ms, 3100 * ms, 3200 * ms, 3300 * ms}},
		{"stall after 2 for 10s", []faults.Spec{{Kind: faults.KindStall, After: intp(2), For: yamlfile.Duration(10 * time.Second)}},
			[]time.Duration{1000 * ms, 1100 * ms, 11200 * ms, 11300 * ms}},
		{"token rate 1/s", []faults.Spec{{Kind: faults.KindTokenRate, Rate: 1}}, []time.Duration{1000 * ms, 2000 * ms, 3000 * ms, 4000 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				us := spec("upstream", llm.FormatOpenAI, "gpt-4o")
				us.Models[0].TTFT = faults.Fixed(time.Second)
				us.Models[0].TokensPerSecond = 10
				us.Models[0].OutputTokens = mockprovider.Length{Fixed: 4}
				um, _ := mockprovider.NewModel(us, nil)
				uh, _ := mockprovider.NewServer(um, mockprovider.ServerOptions{})
				uln := newPipeListener()
				usrv := &http.Server{Handler: uh}
				go func() { _ = usrv.Serve(uln) }()
				defer usrv.Close()
				upClient := &http.Client{Transport: &http.Transport{DialContext: uln.dial}}
				defer upClient.CloseIdleConnections()

				px := mockprovider.ProviderSpec{Name: "proxy", Format: llm.FormatOpenAI, ProxyTo: "http://upstream", Faults: tt.faults}
				got := arrivalsWith(t, px, mockprovider.ServerOptions{Client: upClient})
				if len(got) != len(tt.want) {
					t.Fatalf("arrivals %v, want %v", got, tt.want)
				}
				for i := range tt.want {
					if got[i] != tt.want[i] {
						t.Fatalf("token %d at %v, want %v (all: %v)", i, got[i], tt.want[i], got)
					}
				}
			})
		})
	}
}
