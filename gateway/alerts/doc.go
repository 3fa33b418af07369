// Package alerts evaluates alerting rules over the gateway's event log.
//
// An Evaluator is pure: it performs no I/O, starts no goroutines and never
// reads the clock. Callers feed it events with Observe, or ObserveEvent to
// spare a copy per event (request, attempt and breaker events, each carrying
// its own time; other kinds are ignored), and ask it, at a time of their
// choosing, which alerts changed state with Evaluate. Firing and resolving are
// returned as alert.fired and alert.resolved events; delivering them to
// webhooks or logs is the caller's job (package gateway does it for the live
// gateway, the simulator models sinks as up or down).
//
// Rules are evaluated over sliding windows kept in fixed-width buckets, so the
// memory an Evaluator uses is bounded by the number of rules, routes and
// targets, not by traffic.
//
// Rule kinds:
//
//   - fallback_rate: share of a route's requests not served by its primary
//     target (a later target, a lower tier or a failure) over Window.
//   - ttft_penalty: a route's p95 time-to-first-token over Window divided by
//     its baseline (Baseline when set, else the p95 over the BaselineWindow
//     before the current window).
//   - spend_rate: spend (attempt costs) over Window scaled to dollars per hour.
//   - fallback_spend_share: share of the spend over Window paid to targets
//     other than the route's primary.
//   - fallback_unexercised: a fallback target that served no successful attempt
//     for Window (use days): the path may be dead and nobody would know.
//   - breaker_flapping: breaker openings of one target within Window.
//   - demotion_flapping: demotions of one target (health.change to
//     unhealthy) within Window: health that keeps letting traffic back onto
//     a target that is still sick, the relapses of a brownout.
package alerts
