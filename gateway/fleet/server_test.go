package fleet

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

// redisServer is a real redis-server on a free loopback port, in a
// temporary directory, persisting nothing. Without redis-server the test
// skips, unless BROWNOUT_REQUIRE_REDIS is set (CI), where it fails.
type redisServer struct {
	tb   testing.TB
	port int
	cmd  *exec.Cmd
	dir  string
}

func startRedis(tb testing.TB) *redisServer {
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
	s := &redisServer{tb: tb, port: port, dir: tb.TempDir()}
	s.start()
	tb.Cleanup(s.stop)
	return s
}

func (s *redisServer) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

func (s *redisServer) start() {
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

// stop kills the server (a crash: no shutdown handshake).
func (s *redisServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}
