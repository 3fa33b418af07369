package reports

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chromium finds a headless browser. CI installs Debian's chromium and sets
// BROWNOUT_REQUIRE_CHROMIUM=1 so that a missing browser fails instead of
// skipping.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BROWNOUT_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no chromium on PATH and BROWNOUT_REQUIRE_CHROMIUM is set")
	}
	t.Skip("no chromium on PATH")
	return ""
}

// TestHTMLRendersInChromium renders the report in headless Chromium with the
// network off and checks the screenshot: the charts drew their stacked areas
// (the primary's blue), the fault shading, the breaker bands (open red and
// closed green), not a blank page.
func TestHTMLRendersInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, fixture()))
	require.NoError(t, os.WriteFile(page, buf.Bytes(), 0o644))
	shot := filepath.Join(dir, "shot.png")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1100,1800", "--screenshot="+shot, "file://"+page)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "chromium: %s", out)

	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	if os.Getenv("BROWNOUT_KEEP_SCREENSHOT") != "" {
		_ = os.WriteFile(os.Getenv("BROWNOUT_KEEP_SCREENSHOT"), mustRead(t, shot), 0o644)
	}

	count := func(r0, g0, b0 int) int {
		n := 0
		bounds := img.Bounds()
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				if near(img, x, y, r0, g0, b0) {
					n++
				}
			}
		}
		return n
	}
	require.Greater(t, count(0x3b, 0x6f, 0xd6), 2000, "stacked area of the first target")
	require.Greater(t, count(0xe0, 0x8a, 0x1e), 800, "stacked area of the second target")
	require.Greater(t, count(0xd6, 0x27, 0x28), 500, "open breaker band")
	require.Greater(t, count(0x8f, 0xd1, 0x9e), 2000, "closed breaker band")
}

func near(img image.Image, x, y, r0, g0, b0 int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	d := func(a uint32, b int) int {
		v := int(a>>8) - b
		if v < 0 {
			return -v
		}
		return v
	}
	return d(r, r0) < 24 && d(g, g0) < 24 && d(b, b0) < 24
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
