package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brownout-dev/brownout/mockprovider"
)

const mockFile = `version: 1
providers:
  - name: openai
    format: openai
    models: [{name: gpt-4o}]
  - name: anthropic
    format: anthropic
    models: [{name: claude-sonnet-4-5}]
  - name: gemini
    format: gemini
    models: [{name: gemini-2.5-flash}]
`

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMockServesUntilCanceled(t *testing.T) {
	path := writeFile(t, "providers.yaml", mockFile)
	var out, errOut bytes.Buffer
	f := &Factory{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
	ctx, cancel := context.WithCancel(context.Background())
	var statuses []int
	cmd := NewCmdMock(f, func(o *MockOptions) error {
		o.Ready = func(g *mockprovider.Group) {
			defer cancel()
			for _, p := range g.Providers {
				resp, err := http.Get(p.URL + "/_mock/stats")
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				statuses = append(statuses, resp.StatusCode)
			}
		}
		return mockRun(ctx, o)
	})
	cmd.SetArgs([]string{"-c", path})
	cmd.SetOut(&out)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	line := out.String()
	if !strings.HasPrefix(line, "mock ready: openai=http://127.0.0.1:") || !strings.Contains(line, " anthropic=http://127.0.0.1:") ||
		!strings.Contains(line, " gemini=http://127.0.0.1:") || strings.Count(line, "\n") != 1 {
		t.Fatalf("ready line %q", line)
	}
	if len(statuses) != 3 || statuses[0] != 200 {
		t.Fatalf("statuses %v", statuses)
	}
}

func TestMockBadFile(t *testing.T) {
	path := writeFile(t, "bad.yaml", "version: 1\nproviders:\n  - name: x\n    format: grpc\n    models: [{name: m}]\n")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"mock", path}, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != exitUsageErr || !strings.Contains(errOut.String(), "bad.yaml:4:13: providers.0.format: unknown format") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestMockUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"mock"}, "a providers file is required"},
		{[]string{"mock", "--proxy-to", "ftp://x"}, "proxy_to: must be an http(s) URL"},
		{[]string{"mock", "-c", "a.yaml", "b.yaml"}, "give the providers file once"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != exitUsageErr || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q", tt.args, code, errOut.String())
		}
	}
}

func TestMockProxyNeedsOneProvider(t *testing.T) {
	path := writeFile(t, "providers.yaml", mockFile)
	_, err := mockSpecs(&MockOptions{Config: path, ProxyTo: "http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "exactly one provider") {
		t.Fatalf("got %v", err)
	}
	specs, err := mockSpecs(&MockOptions{ProxyTo: "http://127.0.0.1:1", Format: "anthropic", Listen: "127.0.0.1:0", Name: "px"})
	if err != nil || specs[0].ProxyTo != "http://127.0.0.1:1" || specs[0].Format != "anthropic" {
		t.Fatalf("%+v %v", specs, err)
	}
}
