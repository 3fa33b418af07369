package reports

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/score"
)

func TestFixtureIsAnIncident(t *testing.T) {
	r := fixture()
	require.Len(t, r.Faults, 1)
	f := r.Faults[0]
	require.True(t, f.Detected)
	require.Equal(t, 4*time.Second, f.TTD)
	require.NotEmpty(t, r.Series.Points)
	require.NotEmpty(t, r.Series.Breakers)
}

// TestRenderingsGolden: the scorecard and the Markdown of a one-fault run
// and of a run with crowded faults, flaps on two targets and a grouped
// timeline.
func TestRenderingsGolden(t *testing.T) {
	for name, r := range map[string]*score.Result{"report": fixture(), "incidents": incidents()} {
		t.Run(name, func(t *testing.T) {
			var md bytes.Buffer
			require.NoError(t, WriteMarkdown(&md, r))
			golden.Check(t, "testdata/"+name+".md.golden", md.Bytes())
			golden.Check(t, "testdata/"+name+".scorecard.golden", []byte(Scorecard(r)))
		})
	}
}

// TestFlapsPerTargetInEveryFormat: the run's flaps name the targets they
// come from, and each target's demotions show how its flaps arose — in the
// scorecard, the Markdown and the HTML.
func TestFlapsPerTargetInEveryFormat(t *testing.T) {
	r := incidents()
	require.Equal(t, 2, r.Overall.Flaps)
	const overall = "2 (anthropic:claude-sonnet-4-5 1, gemini:gemini-2.5-flash 1)"
	var md, page bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, r))
	require.NoError(t, WriteHTML(&page, r))
	card := Scorecard(r)
	require.Contains(t, card, "flaps "+overall)
	require.Contains(t, md.String(), "| flaps (by target) | "+overall+" |")
	require.Contains(t, page.String(), "<td>"+overall+"</td>")
	// anthropic: 3 unhealthy markings, 1 re-detection, 1 oscillation; gemini: 1 false positive.
	require.Regexp(t, `anthropic:claude-sonnet-4-5 +0 +3 +1 +1 +0 +1\n`, card)
	require.Regexp(t, `gemini:gemini-2.5-flash +0 +1 +0 +0 +1 +1\n`, card)
	require.Contains(t, md.String(), "| anthropic:claude-sonnet-4-5 | 0 | 3 | 1 | 1 | 0 | 1 | 0s |")
	require.Contains(t, page.String(), "<tr><td>gemini:gemini-2.5-flash</td><td>0</td><td>1</td><td>0</td><td>0</td><td>1</td><td>1</td><td>0s</td></tr>")
}

// TestDurationsReadTheSameEverywhere: a TTD of 829ms is "800ms" in the
// chart's mark, the scorecard, the Markdown and the HTML tables, as in the
// verdicts of result.json.
func TestDurationsReadTheSameEverywhere(t *testing.T) {
	r := incidents()
	f := r.Faults[0]
	require.Equal(t, 829*time.Millisecond, f.TTD)
	var md, page bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, r))
	require.NoError(t, WriteHTML(&page, r))
	require.Contains(t, page.String(), ">TTD 800ms</text>")
	require.Contains(t, page.String(), "<td>800ms (breaker)</td>")
	require.Contains(t, md.String(), "| 800ms (breaker) |")
	require.Contains(t, Scorecard(r), "TTD 800ms (breaker)")
	for _, out := range []string{page.String(), md.String(), Scorecard(r)} {
		require.NotContains(t, out, "829ms")
	}
}

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, fixture()))
	golden.Check(t, "testdata/junit.xml.golden", buf.Bytes())
}

// TestJUnitShape checks the output against the shape of the common JUnit
// schema (the Jenkins/Ant junit-10 XSD): a testsuites root whose testsuite
// children carry name, tests, failures, errors and time, and whose testcase
// children carry name, classname and time, with failure/error elements
// carrying message and type.
func TestJUnitShape(t *testing.T) {
	r := fixture()
	r.Aborted, r.AbortReason = true, "stop_when: success rate below 50% for 30s"
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, r))

	type attrs map[string]string
	type elem struct {
		Name     string
		Attrs    attrs
		Children []*elem
	}
	dec := xml.NewDecoder(&buf)
	var stack []*elem
	var root *elem
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &elem{Name: tk.Name.Local, Attrs: attrs{}}
			for _, a := range tk.Attr {
				e.Attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, e)
			} else {
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	require.NotNil(t, root)
	require.Equal(t, "testsuites", root.Name)
	allowed := map[string][]string{
		"testsuites": {"testsuite"},
		"testsuite":  {"properties", "testcase", "system-out", "system-err"},
		"properties": {"property"},
		"testcase":   {"failure", "error", "skipped", "system-out", "system-err"},
	}
	required := map[string][]string{
		"testsuite": {"name", "tests", "failures", "errors", "time"},
		"testcase":  {"name", "classname", "time"},
		"failure":   {"message", "type"},
		"error":     {"message", "type"},
		"property":  {"name", "value"},
	}
	cases, failures, errs := 0, 0, 0
	var walk func(e *elem)
	walk = func(e *elem) {
		for _, a := range required[e.Name] {
			require.Contains(t, e.Attrs, a, "<%s> lacks %s", e.Name, a)
		}
		for _, c := range e.Children {
			require.Contains(t, allowed[e.Name], c.Name, "<%s> may not contain <%s>", e.Name, c.Name)
			walk(c)
		}
		switch e.Name {
		case "testcase":
			cases++
		case "failure":
			failures++
		case "error":
			errs++
		}
	}
	walk(root)
	suite := root.Children[0]
	require.Equal(t, len(r.Expectations)+1, cases) // one per expectation plus the aborted run
	require.Equal(t, suite.Attrs["tests"], itoa(cases))
	require.Equal(t, suite.Attrs["failures"], itoa(failures))
	require.Equal(t, suite.Attrs["errors"], itoa(errs))
	require.Equal(t, 1, errs)
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestScorecardColour(t *testing.T) {
	r := fixture()
	var plain, colour bytes.Buffer
	require.NoError(t, WriteScorecard(&plain, r, false))
	require.NoError(t, WriteScorecard(&colour, r, true))
	require.NotContains(t, plain.String(), "\x1b[")
	require.Contains(t, colour.String(), "\x1b[31mFAIL\x1b[0m")
	require.Contains(t, colour.String(), "\x1b[32mPASS\x1b[0m")
	out := plain.String()
	require.True(t, strings.HasPrefix(out, "FAIL  game day primary-429-storm"), out)
	require.Contains(t, out, "openai-429")
	require.Contains(t, out, "4s (breaker)")
}

func TestColorEnabled(t *testing.T) {
	require.False(t, ColorEnabled(&bytes.Buffer{}), "a buffer is not a terminal")
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	require.False(t, ColorEnabled(f), "a regular file is not a terminal")

	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	require.True(t, colorAllowed(env("TERM", "xterm-256color"), true), "a terminal gets colour")
	require.False(t, colorAllowed(env("NO_COLOR", ""), true), "NO_COLOR set, even empty, turns colour off")
	require.False(t, colorAllowed(env("TERM", "dumb"), true), "a dumb terminal gets none")
	require.False(t, colorAllowed(env(), false), "a pipe gets none")
}

func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, fixture()))
	page := buf.String()
	require.Equal(t, 5, strings.Count(page, "<svg "), "five charts")
	for _, bad := range []string{"<link", " src=", "@import", "url(", "https://", "http://cdn"} {
		require.NotContains(t, page, bad)
	}
	// The only URL is the SVG namespace.
	require.Equal(t, strings.Count(page, "http://"), strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`))
	require.Contains(t, page, "TTD 4s")
	require.Contains(t, page, "SLO 99%")
	require.Contains(t, page, `data-kind="breaker.transition"`)
	require.Contains(t, page, "name: primary-429-storm")
}

func TestHTMLEscapesUserText(t *testing.T) {
	r := fixture()
	r.Scenario = `<script>alert(1)</script>`
	r.Faults[0].Step = `"><b>x`
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, r))
	require.NotContains(t, buf.String(), "<script>alert(1)")
	require.NotContains(t, buf.String(), `"><b>x`)
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteFiles(dir, fixture()))
	for _, f := range []string{HTMLFile, MarkdownFile, JUnitFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

func TestDiff(t *testing.T) {
	old := fixture()
	same := Diff(old, fixture(), DefaultTolerances)
	require.Empty(t, same.Regressions(), "a run compared with itself has no regression")

	worse := fixture()
	worse.Faults[0].TTD += 5 * time.Second
	worse.Overall.Availability.Success -= 0.02
	worse.Overall.Flaps++
	worse.Expectations[0].Pass = false
	d := Diff(old, worse, DefaultTolerances)
	var names []string
	for _, r := range d.Regressions() {
		names = append(names, r.Score)
	}
	require.ElementsMatch(t, []string{"availability", "flaps", "ttd [openai-429] openai:gpt-4o", "expectation ttd openai-429 openai:gpt-4o"}, names)

	within := fixture()
	within.Faults[0].TTD += 500 * time.Millisecond
	require.Empty(t, Diff(old, within, DefaultTolerances).Regressions(), "0.5s is within the 1s tolerance")

	lost := fixture()
	lost.Faults[0].Detected = false
	require.Len(t, Diff(old, lost, DefaultTolerances).Regressions(), 1)

	var buf bytes.Buffer
	require.NoError(t, WriteDiff(&buf, d, false))
	require.Contains(t, buf.String(), "REGRESSION")
	require.Contains(t, buf.String(), "4 regression(s)")

	// Flaps name their targets.
	inc := incidents()
	flappier := incidents()
	flappier.Overall.Flaps++
	flappier.Targets[1].Flaps++
	buf.Reset()
	require.NoError(t, WriteDiff(&buf, Diff(inc, flappier, DefaultTolerances), false))
	require.Regexp(t, `flaps +2 \(anthropic:claude-sonnet-4-5 1, gemini:gemini-2.5-flash 1\) +3 \(anthropic:claude-sonnet-4-5 1, gemini:gemini-2.5-flash 2\) +\+1 +REGRESSION`, buf.String())
}

func TestTrend(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, q := range []string{"2026-q1", "2026-q2", "2026-q3", "2026-q3-live"} {
		r := fixture()
		if strings.HasSuffix(q, "-live") {
			r.Mode = score.ModeLive
		}
		r.Faults[0].TTD = time.Duration(10-3*i) * time.Second
		var buf bytes.Buffer
		require.NoError(t, writeJSON(&buf, r))
		p := filepath.Join(dir, q, "result.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
		require.NoError(t, os.Chtimes(p, base.AddDate(0, 3*i, 0), base.AddDate(0, 3*i, 0)))
	}
	runs, err := LoadRuns(dir)
	require.NoError(t, err)
	require.Len(t, runs, 4)
	tr := Trend(runs)
	// Modes apart: the live run is a series of its own.
	pts := tr["primary-429-storm (sim)"]
	require.Len(t, pts, 3)
	require.Len(t, tr["primary-429-storm (live)"], 1)
	require.Equal(t, []string{"2026-q1", "2026-q2", "2026-q3"}, []string{pts[0].Label, pts[1].Label, pts[2].Label})
	require.Equal(t, 10*time.Second, pts[0].TTD)
	require.Equal(t, 4*time.Second, pts[2].TTD)
	var txt, page bytes.Buffer
	require.NoError(t, WriteTrend(&txt, tr))
	require.Contains(t, txt.String(), "2026-q2")
	// Steps apart: each fault step has its own column.
	for _, f := range fixture().Faults {
		require.Contains(t, txt.String(), f.Step+" "+f.Target+" TTD / TTM")
	}
	require.Equal(t, 4*time.Second, pts[2].Steps[0].TTD)
	require.NoError(t, WriteTrendHTML(&page, tr))
	require.Contains(t, page.String(), "<svg ")
	require.NotContains(t, txt.String(), "different result schemas", "one schema: no warning")

	// An archived run from before schema 2 in the same series is named.
	old := fixture()
	old.Schema = 1
	var buf bytes.Buffer
	require.NoError(t, writeJSON(&buf, old))
	p := filepath.Join(dir, "2025-q4", "result.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	require.NoError(t, os.Chtimes(p, base.AddDate(0, -3, 0), base.AddDate(0, -3, 0)))
	runs, err = LoadRuns(dir)
	require.NoError(t, err)
	txt.Reset()
	page.Reset()
	require.NoError(t, WriteTrend(&txt, Trend(runs)))
	require.Contains(t, txt.String(), "different result schemas (schema 1: 2025-q4; schema 2: 2026-q1, 2026-q2, 2026-q3)")
	require.NoError(t, WriteTrendHTML(&page, Trend(runs)))
	require.Contains(t, page.String(), `<p class="warning">`)

	_, err = LoadRuns(t.TempDir())
	require.ErrorContains(t, err, "no result.json")
}

func writeJSON(buf *bytes.Buffer, r *score.Result) error {
	return jsonEncode(buf, r)
}

func TestDiffSweeps(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	sweep := func(worst *float64, rate float64) *scenarios.Sweep {
		return &scenarios.Sweep{Scenario: "s", Mode: score.ModeSim, Seeds: []uint64{1, 2},
			Scores: []scenarios.SweepScore{
				{Name: "ttd", Step: "a", Target: "p:m", Unit: "duration", HigherIsWorse: true, Median: v(5e9), P90: v(6e9), Worst: worst},
				{Name: "availability", Unit: "rate", Median: v(0.999), P90: v(0.99), Worst: v(0.98)},
			},
			Expectations: []scenarios.SweepVerdict{{Name: "ttd", Step: "a", Target: "p:m", Want: "<= 10s", Rate: rate, Needed: 0.9, Pass: rate >= 0.9}}}
	}
	d := DiffSweeps(sweep(v(7e9), 1), sweep(nil, 0.5), DefaultTolerances)
	var regressed []string
	for _, r := range d.Regressions() {
		regressed = append(regressed, r.Score)
	}
	require.Equal(t, []string{"ttd [a] p:m worst", "pass rate ttd a p:m"}, regressed)
	require.Empty(t, DiffSweeps(sweep(v(7e9), 1), sweep(v(7.5e9), 1), DefaultTolerances).Regressions(), "within the 1s tolerance")

	require.NoError(t, Comparable("s", score.ModeSim, "s", score.ModeSim))
	require.ErrorContains(t, Comparable("s", score.ModeSim, "t", score.ModeSim), "different scenarios")
	require.ErrorContains(t, Comparable("s", score.ModeSim, "s", score.ModeLive), "different modes")
}

// TestScorecardAbortedRun: an aborted run (Ctrl-C, a stop condition) says
// so beside its expectations, which were judged on part of a run, and its
// step cut short reads "not recovered: run aborted", never "superseded".
func TestScorecardAbortedRun(t *testing.T) {
	r := fixture()
	r.Aborted, r.AbortReason, r.Pass = true, "canceled", false
	last := &r.Faults[len(r.Faults)-1]
	last.Superseded, last.CutShort, last.Recovered = false, true, false
	var buf bytes.Buffer
	require.NoError(t, WriteScorecard(&buf, r, false))
	out := buf.String()
	require.Contains(t, out, "ABORTED")
	require.Contains(t, out, "not recovered: run aborted")
	require.Contains(t, out, "the run was aborted, so it fails)")
	require.NotContains(t, out, " hold)\n")

	r.Aborted = false
	buf.Reset()
	require.NoError(t, WriteScorecard(&buf, r, false))
	require.Contains(t, buf.String(), "cut short")
	require.NotContains(t, buf.String(), "run aborted")
}
