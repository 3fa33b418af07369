package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/mockprovider"
)

// Qualification end to end against the mock providers, over real HTTP in
// three wire formats: the drifting fallback (malformed JSON content and empty
// tool-call arguments, all 200 OK) fails qualification on the structured and
// tool routes.
func TestQualifyAgainstMockProviders(t *testing.T) {
	specs, err := mockprovider.LoadFile("../../examples/evals/providers-qualify.yaml")
	require.NoError(t, err)
	router := &Router{ByProvider: map[string]*Client{}}
	for _, spec := range specs {
		spec.Listen = "127.0.0.1:0" // any free port
		p := mockprovider.StartTest(t, spec)
		c, err := New(Endpoint{URL: p.URL, Format: spec.Format}, nil)
		require.NoError(t, err)
		router.ByProvider[spec.Name] = c
	}
	suite, err := evals.LoadSuite("../../examples/evals/support.yaml")
	require.NoError(t, err)
	primary := evals.Target{Provider: "openai", Model: "gpt-4o"}
	good := evals.Target{Provider: "anthropic", Model: "claude-sonnet-4"}
	drift := evals.Target{Provider: "cheapco", Model: "gemini-2.0-flash"}
	q, reports, err := evals.Qualify(context.Background(), suite,
		[]evals.Pair{{Primary: primary, Fallback: good}, {Primary: primary, Fallback: drift}},
		router, evals.QualifyOptions{Threshold: 0.95})
	require.NoError(t, err)
	for _, rep := range reports {
		for _, c := range rep.Cases {
			if !c.Pass && rep.Target != drift.String() {
				t.Errorf("%s %s: %+v", rep.Target, c.Case, c)
			}
		}
	}
	verdicts := map[string]string{}
	for _, e := range q.Entries {
		verdicts[e.Fallback+" "+e.Route] = e.Verdict
	}
	require.Equal(t, map[string]string{
		"anthropic:claude-sonnet-4 extract": evals.VerdictQualified,
		"anthropic:claude-sonnet-4 tools":   evals.VerdictQualified,
		"anthropic:claude-sonnet-4 chat":    evals.VerdictQualified,
		"cheapco:gemini-2.0-flash extract":  evals.VerdictUnqualified,
		"cheapco:gemini-2.0-flash tools":    evals.VerdictUnqualified,
		"cheapco:gemini-2.0-flash chat":     evals.VerdictQualified,
	}, verdicts)
	require.False(t, q.Qualified("extract", drift.String()))
	require.True(t, q.Qualified("extract", good.String()))
	for _, e := range q.Entries {
		switch {
		case e.Fallback == drift.String() && e.Route == "extract":
			require.Zero(t, e.Passed)
			require.Contains(t, e.Failures[0], "json_valid: content is not valid JSON")
		case e.Fallback == drift.String() && e.Route == "tools":
			require.Zero(t, e.Passed)
			require.Contains(t, e.Failures[0], "empty arguments")
		}
	}
}
