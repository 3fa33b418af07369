// Package redisserver starts a real redis-server for a live game day with
// a shared fleet state (gateway.state: redis): on a free loopback port, in
// a temporary directory, persisting nothing.
package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNotInstalled is Start's error without redis-server on PATH.
var ErrNotInstalled = errors.New("redis-server is not installed")

// Server is a redis-server started on a free loopback port, persisting
// nothing.
type Server struct {
	addr string
	cmd  *exec.Cmd
	dir  string
}

// Start starts a redis-server; ErrNotInstalled without one on PATH.
func Start() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	dir, err := os.MkdirTemp("", "brownout-redis-")
	if err != nil {
		return nil, err
	}
	rs := &Server{addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir}
	rs.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	if err := rs.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	for range 500 { // up to ~5s to listen
		if redisPing(rs.addr) {
			return rs, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	rs.Stop()
	return nil, fmt.Errorf("redis-server on %s did not answer PING within 5s", rs.addr)
}

// Addr is the server's host:port.
func (rs *Server) Addr() string { return rs.addr }

// Stop kills the server and removes its directory.
func (rs *Server) Stop() {
	_ = rs.cmd.Process.Kill()
	_ = rs.cmd.Wait()
	_ = os.RemoveAll(rs.dir)
}

// redisPing reports whether a Redis server answers PING at addr.
func redisPing(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
