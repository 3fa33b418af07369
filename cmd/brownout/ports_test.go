package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/yamlfile"
)

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestBasePortMovesMocks: one setting moves every port of a file written
// with ${BROWNOUT_BASE_PORT+N}: --base-port for one command, over
// $BROWNOUT_BASE_PORT.
func TestBasePortMovesMocks(t *testing.T) {
	t.Setenv(yamlfile.BasePortEnv, "1") // overridden by the flag
	path := writeFile(t, "providers.yaml", "version: 1\nproviders:\n"+
		"  - {name: openai, format: openai, listen: \"127.0.0.1:${BROWNOUT_BASE_PORT+1}\", models: [{name: gpt-4o}]}\n")
	base := freePort(t) - 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--base-port", fmt.Sprint(base), "mock", "-c", path}, IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/_mock/stats", base+1)
	var status int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url)
		if err == nil {
			status = resp.StatusCode
			resp.Body.Close()
			break
		}
	}
	cancel()
	require.Equal(t, exitOK, <-done)
	require.Equal(t, http.StatusOK, status, "the mock listens on base+1")
	assert.Contains(t, out.String(), fmt.Sprintf("127.0.0.1:%d", base+1), "the ready line names the port")
}

// TestBasePortErrors: a base that leaves a file's port past 65535, or that
// is no port at all, is an input error naming the placeholder's position.
func TestBasePortErrors(t *testing.T) {
	t.Setenv(yamlfile.BasePortEnv, "")
	code, _, errOut := runCLI(t, "--base-port", "65000", "serve", "-c", "../../examples/gateway/local.yaml", "--check")
	assert.Equal(t, exitUsageErr, code)
	assert.Contains(t, errOut, "local.yaml:")
	assert.Contains(t, errOut, "local.yaml:17:62: ${BROWNOUT_BASE_PORT+1101} is port 66101 with BROWNOUT_BASE_PORT=65000: past 65535")

	code, _, errOut = runCLI(t, "--base-port", "0", "version")
	assert.Equal(t, exitUsageErr, code)
	assert.Contains(t, errOut, "--base-port: 0 is not a port number")

	t.Setenv(yamlfile.BasePortEnv, "eighty")
	code, out, _ := runCLI(t, "gameday", "validate", "../../examples/gamedays/quick-429-burst.yaml")
	assert.Equal(t, exitUsageErr, code)
	assert.True(t, strings.Contains(out, `env/providers.yaml:9:23: BROWNOUT_BASE_PORT="eighty" is not a port number (1-65535)`), out)
}
