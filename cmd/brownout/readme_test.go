package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/yamlfile"
)

// readmeBlock is one fenced block of the README.
type readmeBlock struct {
	Line int    // line of the opening fence (1-based)
	Lang string // the fence's info string
	Text string
}

// readmeBlocks returns the fenced blocks of a Markdown document.
func readmeBlocks(doc []byte) []readmeBlock {
	var blocks []readmeBlock
	var cur *readmeBlock
	var body strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body.WriteString(line)
				body.WriteByte('\n')
			}
			continue
		}
		if cur == nil {
			cur = &readmeBlock{Line: n, Lang: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
			body.Reset()
			continue
		}
		cur.Text = body.String()
		blocks = append(blocks, *cur)
		cur = nil
	}
	return blocks
}

// readmeScript is the shell script of a README's runnable blocks (those
// fenced as `sh`), each preceded by a marker naming its line; blocks fenced
// as another shell dialect are reported as errors, so no command escapes the
// test by its fence.
func readmeScript(blocks []readmeBlock) (script string, runnable int, errs []string) {
	var b strings.Builder
	b.WriteString("set -euo pipefail\n")
	for _, bl := range blocks {
		switch bl.Lang {
		case "sh":
			fmt.Fprintf(&b, "echo '### README.md:%d' >&2\n%s", bl.Line, bl.Text)
			runnable++
		case "bash", "shell", "console", "zsh", "shell-session", "sh-session":
			errs = append(errs, fmt.Sprintf("README.md:%d: a %q block: fence commands as sh (run by this test)", bl.Line, bl.Lang))
		}
	}
	return b.String(), runnable, errs
}

func TestReadmeScript(t *testing.T) {
	doc := []byte("# x\n\n```sh\necho one\n```\n\ntext\n\n```go\nfmt.Println()\n```\n\n```bash\nrm -rf /\n```\n```sh\necho two \\\n  three\n```\n")
	blocks := readmeBlocks(doc)
	require.Len(t, blocks, 4)
	script, n, errs := readmeScript(blocks)
	require.Equal(t, 2, n)
	require.Equal(t, []string{`README.md:13: a "bash" block: fence commands as sh (run by this test)`}, errs)
	require.Equal(t, "set -euo pipefail\necho '### README.md:3' >&2\necho one\necho '### README.md:16' >&2\necho two \\\n  three\n", script)
}

// TestREADME runs every `sh` block of the README verbatim, top to bottom in
// one bash shell started at the repository root, the way a newcomer would:
// `go install` puts brownout in the bin directory of a temporary GOPATH
// (the module cache stays where it is), which nothing puts on PATH but the
// README's own install block,
// processes the README starts with `&` run in the background until the end,
// when the whole process group is stopped. Ports are the README's own
// (loopback only) moved to a free base (BROWNOUT_BASE_PORT), so a machine
// where 8080 or 9101 is taken passes too; a lock file serializes runs from
// several checkouts on one machine; builds are made with -pgo=off (see
// below). -short skips it.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README test builds the binary and plays a live game day")
	}
	for _, tool := range []string{"bash", "curl", "make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README test needs %s on PATH (.ci/run installs it): %v", tool, err)
		}
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	script, n, errs := readmeScript(readmeBlocks(doc))
	require.Empty(t, errs)
	require.Greater(t, n, 5, "the README has runnable blocks")

	unlock := lockFile(t, filepath.Join(os.TempDir(), "brownout-readme-test.lock"))
	defer unlock()

	tmp := t.TempDir()
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	scriptPath := filepath.Join(tmp, "readme.sh")
	require.NoError(t, os.WriteFile(scriptPath, []byte(script), 0o600))
	logPath := filepath.Join(tmp, "readme.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", scriptPath)
	cmd.Dir = root
	base := freeBase(t)
	t.Logf("BROWNOUT_BASE_PORT=%d", base)
	// The README's builds (go install, make build, go test -bench) are made
	// without the PGO profile (-pgo=off; the profile changes speed, not
	// behaviour) and all with make build's grpcnotrace tag: so they share
	// one compile of their dependencies, and with make test's non-race
	// pass (built the same way), instead of compiling the 500 of them a
	// third time, with the profile. A GOFLAGS the caller set comes first.
	goflags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -pgo=off -tags=grpcnotrace")
	cmd.Env = append(os.Environ(), "GOBIN=", "GOPATH="+filepath.Join(tmp, "gopath"), "GOMODCACHE="+strings.TrimSpace(string(modcache)),
		"GOFLAGS="+goflags, fmt.Sprintf("%s=%d", yamlfile.BasePortEnv, base))
	// Files, not pipes: background processes keep their output open, and
	// Wait must not wait for them.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	require.NoError(t, cmd.Start())
	runErr := cmd.Wait()
	stopGroup(cmd.Process.Pid)

	out, _ := os.ReadFile(logPath)
	if runErr != nil {
		t.Fatalf("the README failed at %s: %v\n%s", lastMarker(out), runErr, tail(out, 80))
	}
}

// readmeOffsets are the offsets from the base port that the README's
// commands and the files they read listen on (README.md, "Ports").
var readmeOffsets = []int{80, 1101, 1102, 1103, 1111, 1200, 10080, 10081, 10090, 11101, 11102, 11103, 11199, 11201, 11202, 11203, 11301}

// freeBase is a base port, away from the default, at which every
// readmeOffsets port is free now.
func freeBase(t *testing.T) int {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	for range 100 {
		base := 20000 + 10*r.IntN(3000) // up to 49990: +11301 stays under 65535
		free := true
		for _, off := range readmeOffsets {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+off))
			if err != nil {
				free = false
				break
			}
			ln.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no base port with every README port free")
	return 0
}

// stopGroup stops what the README left running in the background: SIGTERM
// (the gateway and the mocks drain and exit), then SIGKILL after a grace.
func stopGroup(pgid int) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	for range 50 {
		time.Sleep(100 * time.Millisecond)
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// lockFile holds an exclusive lock on path until the returned function runs.
func lockFile(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
}

// lastMarker is the README line of the block that was running.
func lastMarker(out []byte) string {
	i := bytes.LastIndex(out, []byte("### README.md:"))
	if i < 0 {
		return "the start"
	}
	line, _, _ := bytes.Cut(out[i+4:], []byte("\n"))
	return string(line)
}

func tail(out []byte, lines int) string {
	s := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(s) > lines {
		s = s[len(s)-lines:]
	}
	return strings.Join(s, "\n")
}
