package evals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// QualificationVersion is the version of the qualification file format.
const QualificationVersion = 1

// Verdicts.
const (
	VerdictQualified   = "qualified"
	VerdictUnqualified = "unqualified"
)

// Qualification is the file `brownout evals qualify` writes and the gateway
// reads at startup: for each primary/fallback pair and route, the fallback's
// pass rate on the suite and the verdict against the threshold.
type Qualification struct {
	Version   int       `json:"version"`
	Suite     string    `json:"suite"`
	Threshold float64   `json:"threshold"`
	Created   time.Time `json:"created"`
	Entries   []Entry   `json:"entries"`
}

// Entry is the verdict on one fallback for one primary on one route.
type Entry struct {
	Primary  string  `json:"primary"`  // "provider:model"
	Fallback string  `json:"fallback"` // "provider:model"
	Route    string  `json:"route"`
	Cases    int     `json:"cases"`
	Passed   int     `json:"passed"`
	PassRate float64 `json:"pass_rate"`
	// PrimaryPassRate is the primary's own pass rate on the route, for
	// reference: a suite the primary fails says more about the suite.
	PrimaryPassRate float64 `json:"primary_pass_rate"`
	Verdict         string  `json:"verdict"`
	// Failures are the first few failure reasons of the fallback, "case: check: reason".
	Failures []string `json:"failures,omitempty"`
}

// Pair is a primary and one of its fallbacks.
type Pair struct {
	Primary, Fallback Target
}

// QualifyOptions tune Qualify.
type QualifyOptions struct {
	RunOptions
	// Threshold is the pass rate a fallback needs on a route (0..1).
	Threshold float64
	// Now stamps the file (the caller passes the clock).
	Now time.Time
}

// maxFailures bounds the failure reasons kept per entry.
const maxFailures = 5

// Qualify runs s against every primary and fallback of pairs (each target
// once) and judges each fallback per route. It also returns the reports, by
// target, in the order the targets were first named.
func Qualify(ctx context.Context, s *Suite, pairs []Pair, send Sender, opts QualifyOptions) (*Qualification, []*Report, error) {
	if opts.Threshold < 0 || opts.Threshold > 1 {
		return nil, nil, fmt.Errorf("threshold %v is not in [0, 1]", opts.Threshold)
	}
	if len(pairs) == 0 {
		return nil, nil, errors.New("no primary/fallback pairs")
	}
	var order []Target
	seen := map[Target]bool{}
	for _, p := range pairs {
		for _, t := range []Target{p.Primary, p.Fallback} {
			if !seen[t] {
				seen[t] = true
				order = append(order, t)
			}
		}
	}
	reports := make(map[Target]*Report, len(order))
	var out []*Report
	for _, t := range order {
		rep, err := Run(ctx, s, t, send, opts.RunOptions)
		if err != nil {
			return nil, nil, err
		}
		reports[t] = rep
		out = append(out, rep)
	}
	q := &Qualification{Version: QualificationVersion, Suite: s.Name, Threshold: opts.Threshold, Created: opts.Now.UTC()}
	for _, p := range pairs {
		fb, pr := reports[p.Fallback], reports[p.Primary]
		for _, rs := range fb.Routes {
			e := Entry{Primary: p.Primary.String(), Fallback: p.Fallback.String(), Route: rs.Name,
				Cases: rs.Total, Passed: rs.Passed, PassRate: rs.PassRate, Verdict: VerdictUnqualified}
			for _, prs := range pr.Routes {
				if prs.Name == rs.Name {
					e.PrimaryPassRate = prs.PassRate
				}
			}
			// A tiny epsilon keeps 19/20 = 0.95 qualified at a 95% threshold.
			if rs.Total > 0 && rs.PassRate+1e-9 >= opts.Threshold {
				e.Verdict = VerdictQualified
			}
			for _, c := range fb.Cases {
				if c.Route != rs.Name || c.Pass || len(e.Failures) >= maxFailures {
					continue
				}
				e.Failures = append(e.Failures, failureLine(c))
			}
			q.Entries = append(q.Entries, e)
		}
	}
	return q, out, nil
}

func failureLine(c CaseResult) string {
	if c.Error != "" {
		return c.Case + ": error: " + c.Error
	}
	for _, r := range c.Results {
		if !r.Pass {
			return c.Case + ": " + r.Check + ": " + r.Reason
		}
	}
	return c.Case
}

// Qualified reports whether target may serve route as a fallback: some entry
// for route names it as a fallback with a qualified verdict, or names it as a
// primary (a primary is the reference its fallbacks were measured against).
// target is "provider:model" (or "provider/model").
func (q *Qualification) Qualified(route, target string) bool {
	if q == nil {
		return false
	}
	if t, err := ParseTarget(target); err == nil {
		target = t.String()
	}
	for _, e := range q.Entries {
		if e.Route != route {
			continue
		}
		if e.Primary == target || (e.Fallback == target && e.Verdict == VerdictQualified) {
			return true
		}
	}
	return false
}

// Unqualified returns the entries whose verdict is unqualified.
func (q *Qualification) Unqualified() []Entry {
	var out []Entry
	for _, e := range q.Entries {
		if e.Verdict != VerdictQualified {
			out = append(out, e)
		}
	}
	return out
}

// Marshal returns the file's JSON (indented, newline-terminated).
func (q *Qualification) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteFile writes the qualification file.
func (q *Qualification) WriteFile(path string) error {
	b, err := q.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// LoadQualification reads a qualification file. Unknown fields, a wrong
// version and malformed entries are errors naming the file and the entry.
func LoadQualification(path string) (*Qualification, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseQualification(path, data)
}

// ParseQualification parses a qualification file named file.
func ParseQualification(file string, data []byte) (*Qualification, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var q Qualification
	if err := dec.Decode(&q); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset-1) // Offset is just past the bad byte
			return nil, fmt.Errorf("%s:%d:%d: %v", file, line, col, err)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if q.Version != QualificationVersion {
		return nil, fmt.Errorf("%s: version: %d is not %d", file, q.Version, QualificationVersion)
	}
	for i, e := range q.Entries {
		var problems []string
		for _, f := range []struct{ name, v string }{{"primary", e.Primary}, {"fallback", e.Fallback}} {
			if _, err := ParseTarget(f.v); err != nil {
				problems = append(problems, f.name+": "+err.Error())
			}
		}
		if e.Route == "" {
			problems = append(problems, "route: missing")
		}
		if e.Verdict != VerdictQualified && e.Verdict != VerdictUnqualified {
			problems = append(problems, fmt.Sprintf("verdict: %q is not %s or %s", e.Verdict, VerdictQualified, VerdictUnqualified))
		}
		if len(problems) > 0 {
			return nil, fmt.Errorf("%s: entries.%d: %s", file, i, strings.Join(problems, "; "))
		}
	}
	return &q, nil
}

func position(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// WriteText prints one line per entry: verdict, pair, route and pass rates.
func (q *Qualification) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "qualification of suite %s at threshold %.1f%%\n\n", q.Suite, 100*q.Threshold)
	fmt.Fprintln(tw, "VERDICT\tROUTE\tPRIMARY\tFALLBACK\tPASSED\tRATE\tPRIMARY RATE")
	for _, e := range q.Entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%.1f%%\t%.1f%%\n", e.Verdict, e.Route, e.Primary, e.Fallback,
			e.Passed, e.Cases, 100*e.PassRate, 100*e.PrimaryPassRate)
	}
	for _, e := range q.Entries {
		for _, f := range e.Failures {
			fmt.Fprintf(tw, "  %s on %s: %s\n", e.Fallback, e.Route, f)
		}
	}
	return tw.Flush()
}
