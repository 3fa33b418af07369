//go:build !unix

package gateway

// connAlive cannot peek at a socket here: a closed pooled connection is
// noticed when the request meets it (and retried by the rules of
// h1Transport.RoundTrip).
func connAlive(*h1Conn) bool { return true }
