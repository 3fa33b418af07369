package promrules_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/brownout-dev/brownout/promrules"
)

// Scrape a registry every 15 seconds of virtual time and evaluate a rule
// with for: 30s: pending at the first evaluation that sees the counter rise
// (its first failures are scraped at 30s),
// firing 30 seconds later.
func Example() {
	rules, errs := promrules.Parse("alerts.yaml", []byte(`groups:
  - name: example
    rules:
      - alert: Failing
        expr: rate(failures_total[1m]) > 0
        for: 30s
        labels: {severity: page}
`))
	if len(errs) > 0 {
		fmt.Println(errs)
		return
	}
	reg := prometheus.NewRegistry()
	failures := prometheus.NewCounter(prometheus.CounterOpts{Name: "failures_total", Help: "Failures."})
	reg.MustRegister(failures)

	store := promrules.NewStore()
	ev := promrules.NewEvaluator(rules, store, promrules.Options{EvalInterval: 15 * time.Second})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for at := time.Duration(0); at <= 2*time.Minute; at += 15 * time.Second {
		if at >= 30*time.Second {
			failures.Add(3)
		}
		mfs, _ := reg.Gather()
		store.AppendFamilies(start.Add(at), mfs)
		changes, _ := ev.Eval(context.Background(), start.Add(at))
		for _, c := range changes {
			fmt.Println(at, c.Labels, c.From, "->", c.To)
		}
	}
	// Output:
	// 30s {alertname="Failing", severity="page"} inactive -> pending
	// 1m0s {alertname="Failing", severity="page"} pending -> firing
}
