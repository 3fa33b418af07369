package gateway

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/brownout-dev/brownout/yamlfile"
)

// checkListen checks that addr is host:port with a port in 0-65535.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}

// Preflight checks what a loaded configuration needs from the machine before
// the gateway can serve it, short of taking traffic: the listen address
// (listen, or the override when not empty) parses and resolves, and the
// usage file can be appended to (its directory exists and is writable; the
// file is not created). `brownout serve` runs it before starting and
// `serve --check` runs it too, so a configuration the check accepts is one
// the gateway starts with. Every problem is reported (a yamlfile.Errors,
// with the position of the field when the configuration came from a file).
// Binding the port is left to serve: a check run next to the running gateway
// would find its own port taken.
func (c *Config) Preflight(listenOverride string) error {
	var es yamlfile.Errors
	add := func(path, format string, args ...any) {
		if c.doc != nil {
			es = append(es, c.doc.Errorf(path, format, args...))
			return
		}
		es = append(es, &yamlfile.Error{File: c.file, Field: path, Msg: fmt.Sprintf(format, args...)})
	}
	addr, field := c.ListenAddr(), "listen"
	if listenOverride != "" {
		addr, field = listenOverride, "--listen"
	}
	if err := checkListen(addr); err != nil {
		add(field, "%v", err)
	} else if _, err := net.ResolveTCPAddr("tcp", addr); err != nil {
		add(field, "%q does not resolve: %v", addr, err)
	}
	if c.Usage.File != "" {
		if err := checkAppendable(c.Usage.File); err != nil {
			add("usage.file", "%v", err)
		}
	}
	return es.Err()
}

// checkAppendable checks that path can be opened for appending without
// creating it: an existing file is opened and closed; otherwise a scratch
// file is created in its directory and removed.
func checkAppendable(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("cannot append to %s: %w", path, errors.Unwrap(err))
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("directory %s does not exist (create it, or change usage.file)", dir)
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".brownout-check-*")
	if err != nil {
		return fmt.Errorf("cannot create %s: directory %s is not writable", path, dir)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}
