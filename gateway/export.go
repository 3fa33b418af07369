package gateway

// ListenAddr returns the address to serve on (listen:, default
// 127.0.0.1:8080).
func (c *Config) ListenAddr() string { return c.listen() }
