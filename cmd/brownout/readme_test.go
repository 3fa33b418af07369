package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
// (loopback only); a lock file serializes runs from several checkouts on one
// machine. -short skips it.
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
	cmd.Env = append(os.Environ(), "GOBIN=", "GOPATH="+filepath.Join(tmp, "gopath"), "GOMODCACHE="+strings.TrimSpace(string(modcache)))
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
