package evals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/brownout-dev/brownout/llm"
)

// Target is a provider and a model.
type Target struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// ParseTarget reads "provider/model" or "provider:model". The model may
// itself contain '/' or ':' (the first separator splits).
func ParseTarget(s string) (Target, error) {
	i := strings.IndexAny(s, "/:")
	if i <= 0 || i == len(s)-1 {
		return Target{}, fmt.Errorf("target %q: want provider/model", s)
	}
	return Target{Provider: s[:i], Model: s[i+1:]}, nil
}

// String returns "provider:model", the form events and qualification files use.
func (t Target) String() string { return t.Provider + ":" + t.Model }

// Sender sends one request to a target (through a gateway or straight to the
// provider) and returns the response, or the error: an *llm.Error when the
// provider answered non-2xx.
type Sender interface {
	Send(ctx context.Context, t Target, route string, req *llm.Request) (*llm.Response, error)
}

// SenderFunc adapts a function to a Sender.
type SenderFunc func(ctx context.Context, t Target, route string, req *llm.Request) (*llm.Response, error)

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, t Target, route string, req *llm.Request) (*llm.Response, error) {
	return f(ctx, t, route, req)
}

// RunOptions tune a run.
type RunOptions struct {
	// Concurrency is how many cases are in flight at once. Default 4.
	Concurrency int
	// Routes restricts the run to these routes; empty runs every route.
	Routes []string
}

// ReportVersion is the version of the Report JSON.
const ReportVersion = 1

// Report is the result of running a suite against one target. It holds no
// timings, so the same answers give the same bytes.
type Report struct {
	Version  int          `json:"version"`
	Suite    string       `json:"suite"`
	Target   string       `json:"target"` // "provider:model"
	Total    int          `json:"total"`
	Passed   int          `json:"passed"`
	PassRate float64      `json:"pass_rate"`
	Errors   int          `json:"errors"` // cases whose request failed
	Routes   []RateStat   `json:"routes"`
	Checks   []RateStat   `json:"checks"` // per check name, over the cases that have it
	Cases    []CaseResult `json:"cases"`
}

// RateStat is a pass rate over a group (a route or a check).
type RateStat struct {
	Name     string  `json:"name"`
	Route    string  `json:"route,omitempty"` // for checks: the route, when per route
	Total    int     `json:"total"`
	Passed   int     `json:"passed"`
	PassRate float64 `json:"pass_rate"`
}

// CaseResult is one case's outcome: it passes when the request succeeded and
// every check passed.
type CaseResult struct {
	Case         string           `json:"case"`
	Route        string           `json:"route"`
	Pass         bool             `json:"pass"`
	Error        string           `json:"error,omitempty"`
	FinishReason llm.FinishReason `json:"finish_reason,omitempty"`
	OutputTokens int              `json:"output_tokens,omitempty"`
	Results      []Result         `json:"results,omitempty"`
}

// Run sends every case of s (in the selected routes) to t and checks the
// answers. A failed request fails its case (with the error) rather than the
// run; Run returns an error only when ctx ends.
func Run(ctx context.Context, s *Suite, t Target, send Sender, opts RunOptions) (*Report, error) {
	cases := s.Cases
	if len(opts.Routes) > 0 {
		cases = nil
		for _, c := range s.Cases {
			for _, r := range opts.Routes {
				if c.Route == r {
					cases = append(cases, c)
				}
			}
		}
	}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = 4
	}
	results := make([]CaseResult, len(cases))
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range cases {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = RunCase(ctx, &cases[i], t, send)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return NewReport(s.Name, t.String(), results), nil
}

// RunCase sends one case to t and checks the answer.
func RunCase(ctx context.Context, c *Case, t Target, send Sender) CaseResult {
	res := CaseResult{Case: c.Name, Route: c.Route}
	req := c.Request
	req.Model = t.Model
	resp, err := send.Send(ctx, t, c.Route, &req)
	if err != nil {
		res.Error = errorText(err)
		return res
	}
	res.FinishReason = resp.FinishReason
	res.OutputTokens = resp.Usage.OutputTokens
	res.Pass = true
	for _, ch := range c.Checks {
		r := ch.Run(resp)
		res.Results = append(res.Results, r)
		res.Pass = res.Pass && r.Pass
	}
	return res
}

func errorText(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		if le.Status > 0 {
			return fmt.Sprintf("HTTP %d: %s", le.Status, le.Error())
		}
		return le.Error()
	}
	return err.Error()
}

// NewReport aggregates case results (in their order) into a report.
func NewReport(suite, target string, cases []CaseResult) *Report {
	rep := &Report{Version: ReportVersion, Suite: suite, Target: target, Cases: cases}
	routes := map[string]*RateStat{}
	checks := map[[2]string]*RateStat{}
	for _, c := range cases {
		rep.Total++
		if c.Pass {
			rep.Passed++
		}
		if c.Error != "" {
			rep.Errors++
		}
		rs := routes[c.Route]
		if rs == nil {
			rs = &RateStat{Name: c.Route}
			routes[c.Route] = rs
		}
		rs.Total++
		if c.Pass {
			rs.Passed++
		}
		for _, r := range c.Results {
			k := [2]string{c.Route, r.Check}
			cs := checks[k]
			if cs == nil {
				cs = &RateStat{Name: r.Check, Route: c.Route}
				checks[k] = cs
			}
			cs.Total++
			if r.Pass {
				cs.Passed++
			}
		}
	}
	rep.PassRate = rate(rep.Passed, rep.Total)
	// Fill the stats in first-appearance order.
	seenR := map[string]bool{}
	seenC := map[[2]string]bool{}
	for _, c := range cases {
		if !seenR[c.Route] {
			seenR[c.Route] = true
			rs := *routes[c.Route]
			rs.PassRate = rate(rs.Passed, rs.Total)
			rep.Routes = append(rep.Routes, rs)
		}
		for _, r := range c.Results {
			k := [2]string{c.Route, r.Check}
			if !seenC[k] {
				seenC[k] = true
				cs := *checks[k]
				cs.PassRate = rate(cs.Passed, cs.Total)
				rep.Checks = append(rep.Checks, cs)
			}
		}
	}
	return rep
}

func rate(passed, total int) float64 {
	if total == 0 {
		return 0
	}
	return float64(passed) / float64(total)
}

// WriteText prints the report as a table: pass rate per route and per check,
// then every failed case with its reasons.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "suite %s against %s: %d/%d passed (%.1f%%)", r.Suite, r.Target, r.Passed, r.Total, 100*r.PassRate)
	if r.Errors > 0 {
		fmt.Fprintf(tw, ", %d request errors", r.Errors)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "\nROUTE\tCHECK\tPASSED\tRATE")
	for _, rs := range r.Routes {
		fmt.Fprintf(tw, "%s\t(all checks)\t%d/%d\t%.1f%%\n", rs.Name, rs.Passed, rs.Total, 100*rs.PassRate)
		for _, cs := range r.Checks {
			if cs.Route == rs.Name {
				fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.1f%%\n", cs.Route, cs.Name, cs.Passed, cs.Total, 100*cs.PassRate)
			}
		}
	}
	failed := false
	for _, c := range r.Cases {
		if c.Pass {
			continue
		}
		if !failed {
			fmt.Fprintln(tw, "\nFAILED")
			failed = true
		}
		if c.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\terror: %s\n", c.Route, c.Case, c.Error)
			continue
		}
		for _, res := range c.Results {
			if !res.Pass {
				fmt.Fprintf(tw, "%s\t%s\t%s: %s\n", c.Route, c.Case, res.Check, res.Reason)
			}
		}
	}
	return tw.Flush()
}
