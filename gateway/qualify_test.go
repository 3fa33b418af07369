package gateway_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway"
)

// qualConfig is a three-target route (alpha primary; beta qualified, gamma
// not, per testdata/qualification.json) with a qualification section.
func qualConfig(section string, targets ...string) string {
	if len(targets) == 0 {
		targets = []string{"alpha:gpt-4o", "beta:claude-sonnet", "gamma:gemini-flash"}
	}
	var b strings.Builder
	b.WriteString(`version: 1
providers:
  - {name: alpha, kind: openai, base_url: "http://alpha.test/v1"}
  - {name: beta, kind: anthropic, base_url: "http://beta.test"}
  - {name: gamma, kind: gemini, base_url: "http://gamma.test"}
routes:
  - name: chat
    targets:
`)
	for _, t := range targets {
		p, m, _ := strings.Cut(t, ":")
		b.WriteString("      - {provider: " + p + ", model: " + m + "}\n")
	}
	b.WriteString(section)
	return b.String()
}

// The file name places the configuration in testdata/, so the relative
// qualification file resolves next to it.
const qualFile = "testdata/gateway.yaml"

func TestQualificationAtLoad(t *testing.T) {
	for _, tc := range []struct {
		name    string
		section string
		targets []string
		err     []string // substrings of the load error; nil: loads
		warn    []string // unqualified fallbacks (route/target) when it loads
	}{
		{name: "no section", section: "", warn: nil},
		{name: "refuse names route and target",
			section: "qualification: {file: qualification.json, require: refuse}\n",
			err:     []string{qualFile + ":11:9", "routes.0.targets.2", `route "chat"`, "gamma:gemini-flash", "not qualified", "require is refuse"}},
		{name: "warn loads and reports",
			section: "qualification: {file: qualification.json, require: warn}\n",
			warn:    []string{"chat gamma:gemini-flash"}},
		{name: "warn is the default",
			section: "qualification: {file: qualification.json}\n",
			warn:    []string{"chat gamma:gemini-flash"}},
		{name: "all qualified",
			section: "qualification: {file: qualification.json, require: refuse}\n",
			targets: []string{"alpha:gpt-4o", "beta:claude-sonnet"}},
		{name: "the primary needs no qualification",
			section: "qualification: {file: qualification.json, require: refuse}\n",
			targets: []string{"alpha:gpt-4o"}},
		{name: "a qualified fallback is not qualified as primary of another pair",
			section: "qualification: {file: qualification.json, require: refuse}\n",
			targets: []string{"beta:claude-sonnet", "gamma:gemini-flash"},
			err:     []string{"routes.0.targets.1", "gamma:gemini-flash"}},
		{name: "missing file",
			section: "qualification: {file: nope.json, require: refuse}\n",
			err:     []string{"qualification.file", "nope.json"}},
		{name: "bad require",
			section: "qualification: {file: qualification.json, require: maybe}\n",
			err:     []string{"qualification.require", `"maybe" is not warn or refuse`}},
		{name: "require without file",
			section: "qualification: {require: refuse}\n",
			err:     []string{"qualification.file: required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := gateway.ParseConfig(qualFile, []byte(qualConfig(tc.section, tc.targets...)), gateway.LoadOptions{})
			if tc.err != nil {
				require.Error(t, err)
				for _, s := range tc.err {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			var got []string
			for _, u := range cfg.Unqualified() {
				got = append(got, u.Route+" "+u.Target)
				assert.Equal(t, filepath.Join("testdata", "qualification.json"), u.File)
			}
			assert.Equal(t, tc.warn, got)
		})
	}
}

// TestQualificationWarnsAtStart: with require: warn the server starts, logs
// a warning and emits a config.warning event per unqualified fallback.
func TestQualificationWarnsAtStart(t *testing.T) {
	cfg, err := gateway.ParseConfig(qualFile, []byte(qualConfig("qualification: {file: qualification.json, require: warn}\n")), gateway.LoadOptions{})
	require.NoError(t, err)
	var logs bytes.Buffer
	log := &events.Log{}
	srv, err := gateway.New(cfg, gateway.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Events: log})
	require.NoError(t, err)
	defer srv.Close()

	var warns []events.Event
	for _, e := range log.Events() {
		if e.Kind == events.ConfigWarning {
			warns = append(warns, e)
		}
	}
	require.Len(t, warns, 1)
	assert.Equal(t, "chat", warns[0].Route)
	assert.Equal(t, "gamma:gemini-flash", warns[0].Target)
	assert.Equal(t, "unqualified_fallback", warns[0].Name)
	assert.Contains(t, logs.String(), "level=WARN msg=\"unqualified fallback\" route=chat target=gamma:gemini-flash")

	// A reload warns again (the file may have changed since).
	require.NoError(t, srv.Reload(cfg))
	assert.Equal(t, 2, countKind(log.Events(), events.ConfigWarning))
}
