//go:build unix

package gateway

import "syscall"

// connAlive reports whether a pooled connection is still open: a
// non-blocking peek finds no end of stream, no error and no unsolicited
// bytes.
func connAlive(c *h1Conn) bool {
	if c.raw == nil {
		return true
	}
	alive := false
	err := c.raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		_ = n
		alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && alive
}
