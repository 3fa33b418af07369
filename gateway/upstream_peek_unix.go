//go:build unix

package gateway

import (
	"net"
	"syscall"
)

// quietSocket reports whether nothing waits to be read on c, a kept
// connection: no byte the upstream sent after its last answer, and no end
// of stream (an upstream that closed its side). It peeks at the socket
// without blocking and without taking what it finds. A connection it
// cannot look into is not quiet.
func quietSocket(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	quiet := false
	var b [1]byte
	if err := rc.Control(func(fd uintptr) {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		quiet = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	}); err != nil {
		return false
	}
	return quiet
}
