package mockprovider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// Provider is a provider serving on a real address.
type Provider struct {
	// URL is the base URL ("http://127.0.0.1:40123").
	URL    string
	Addr   string
	server *Server
	http   *http.Server
	ln     net.Listener
	done   chan error
}

// Options configure Start.
type Options struct {
	ServerOptions
}

// Start validates spec, builds its model and serves it on spec.Listen (a
// free loopback port when empty) until Close or Shutdown.
func Start(spec ProviderSpec, opts Options) (*Provider, error) {
	m, err := NewModel(spec, nil)
	if err != nil {
		return nil, err
	}
	s, err := NewServer(m, opts.ServerOptions)
	if err != nil {
		return nil, err
	}
	addr := spec.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", spec.Name, err)
	}
	p := &Provider{
		URL: "http://" + ln.Addr().String(), Addr: ln.Addr().String(), server: s, ln: ln,
		http: &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, ErrorLog: nil},
		done: make(chan error, 1),
	}
	go func() {
		err := p.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		p.done <- err
	}()
	return p, nil
}

// StartTest starts spec for a test on a loopback port and closes it when the
// test ends; it fails the test if the spec is invalid.
func StartTest(tb testing.TB, spec ProviderSpec) *Provider {
	tb.Helper()
	p, err := Start(spec, Options{})
	if err != nil {
		tb.Fatalf("mockprovider.StartTest: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// Name returns the provider's name.
func (p *Provider) Name() string { return p.server.model.Name() }

// Model returns the provider's behaviour model (faults, journal, stats).
func (p *Provider) Model() *Model { return p.server.model }

// Handler returns the provider's http.Handler.
func (p *Provider) Handler() *Server { return p.server }

// Shutdown stops accepting requests and waits for in-flight ones until ctx
// ends, then closes the rest.
func (p *Provider) Shutdown(ctx context.Context) error {
	err := p.http.Shutdown(ctx)
	if err != nil {
		_ = p.http.Close()
	}
	if serr := <-p.done; serr != nil && err == nil {
		err = serr
	}
	p.done <- nil
	return err
}

// Close stops the provider at once, closing open connections.
func (p *Provider) Close() {
	_ = p.http.Close()
	<-p.done
	p.done <- nil
}

// Group is several providers started together (brownout mock).
type Group struct {
	Providers []*Provider
}

// StartAll starts every spec; if one fails the others are closed.
func StartAll(specs []ProviderSpec, opts Options) (*Group, error) {
	g := &Group{}
	for _, s := range specs {
		p, err := Start(s, opts)
		if err != nil {
			g.Close()
			return nil, err
		}
		g.Providers = append(g.Providers, p)
	}
	return g, nil
}

// Shutdown shuts every provider down, waiting for in-flight requests until ctx ends.
func (g *Group) Shutdown(ctx context.Context) error {
	var errs []error
	for _, p := range g.Providers {
		if err := p.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("provider %s: %w", p.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// Close closes every provider at once.
func (g *Group) Close() {
	for _, p := range g.Providers {
		p.Close()
	}
}

// Exposed reports whether the provider listens beyond loopback, where
// anyone who reaches it can drive its control API unless a control token
// is set.
func (p *Provider) Exposed() bool {
	ta, ok := p.ln.Addr().(*net.TCPAddr)
	return ok && !ta.IP.IsLoopback()
}
