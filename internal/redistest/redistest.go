// Package redistest starts a real redis-server for tests: on a free
// loopback port, in a temporary directory, persisting nothing. Without
// redis-server installed the test skips, unless BROWNOUT_REQUIRE_REDIS is
// set (CI), where it fails.
//
//	srv := redistest.Start(t)
//	store, _ := fleet.NewRedis(srv.URL(), fleet.RedisOptions{})
//	srv.Stop()  // a crash: no shutdown handshake
//	srv.Start() // back, empty
package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server a test started.
type Server struct {
	tb   testing.TB
	port int
	cmd  *exec.Cmd
	dir  string
}

// Start starts a server that lives until the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("BROWNOUT_REQUIRE_REDIS") != "" {
			tb.Fatal("redis-server is not installed and BROWNOUT_REQUIRE_REDIS is set (apt-get install redis-server)")
		}
		tb.Skip("redis-server not installed (apt-get install redis-server); set BROWNOUT_REQUIRE_REDIS=1 to fail instead")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{tb: tb, port: port, dir: tb.TempDir()}
	s.Start()
	tb.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// Start starts the server again after Stop, on the same port, empty.
func (s *Server) Start() {
	s.tb.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no")
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.port), MaxRetries: -1})
	defer c.Close()
	for range 500 { // up to ~5 s for the server to listen
		if c.Ping(s.tb.Context()).Err() == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.tb.Fatal("redis-server did not answer")
}

// Stop kills the server (a crash: no shutdown handshake).
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}
