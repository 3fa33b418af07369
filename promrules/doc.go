// Package promrules evaluates a team's Prometheus alerting rules over
// metrics scraped in virtual time, with the real PromQL engine
// (github.com/prometheus/prometheus/promql) as a library, so a simulated
// game day tells when the team's own alerts would have fired.
//
// The caller's contract, like a Prometheus server's main loop:
//
//	rules, err := promrules.Load("alerts.yaml")   // rulefmt: strict, every expression parsed
//	store := promrules.NewStore()
//	ev := promrules.NewEvaluator(rules, store, promrules.Options{EvalInterval: 15 * time.Second})
//	// every scrape interval, at virtual time t:
//	store.AppendFamilies(t, gatherer.Gather())  // the exporter's exact series
//	// every evaluation interval:
//	changes, err := ev.Eval(ctx, t)              // pending, firing, resolved
//
// Nothing here does I/O (apart from Load reading the files), starts a
// goroutine or reads the clock: time is an argument, so the same scrapes
// give the same changes, byte for byte.
//
// # Why not the rules package
//
// Prometheus' own rule manager (github.com/prometheus/prometheus/rules)
// brings in its notifier, service discovery and remote-storage config —
// Kubernetes client-go and the Azure SDK among them: 575 packages against
// 312 for promql with model/rulefmt (go list -deps, v0.316.0), and it
// expects a real storage.Appendable and a wall-clock ticker. So this
// package parses rule files with rulefmt (the same validation as promtool
// check rules), queries with promql, and implements the alerting state
// machine of rules.AlertingRule.Eval line for line: an alert whose
// expression returns a sample becomes pending at that evaluation, firing
// at the first evaluation at least for: after it became pending (at once
// for for: 0), stays firing while keep_firing_for: has not elapsed since
// its expression stopped returning it, and is resolved (inactive) at the
// first evaluation that does not keep it. What it leaves out does not
// change when an alert fires: annotations (templates are for humans),
// notifications, the ALERTS and ALERTS_FOR_STATE series, restoring state
// after a restart, and recording rules (a rule file's record: rules are
// skipped; alerting rules that read their output see no series). Label
// values with templates are refused at load time.
//
// # A real server, for live runs
//
// Server is the other side: Debian's prometheus binary started for a live
// game day (Start: the rule files copied into a temporary directory, one
// scrape job on a free loopback port), or a team's own server at a URL
// (Remote, a secret no error names). Holds asks an expression of it, and
// Alerts reads its ALERTS series back as episodes (pending, fired,
// resolved), the live counterpart of what Evaluator.Eval reports.
package promrules
