// Package probe schedules and judges active probes: per target, a small
// synthetic request with a known-good answer, sent every 30–60 s (seeded
// jitter), whose response is checked by eval checks — content, not just
// status. Probes cover routes too cold for the passive detectors.
//
// The [Scheduler] is pure: time is an argument and it performs no I/O. The
// gateway shell sends the probes it returns from [Scheduler.Due] over HTTP
// and reports each [Outcome]; the simulator does the same in virtual time.
// After Config.Failures consecutive failures the scheduler returns an
// [ActionOpenBreaker]; failing targets are probed with exponential backoff,
// and a rate-limited probe waits at least the provider's Retry-After and does
// not count as a failure. Probes never close a breaker: a success only resets
// the failure count (half-open uses a capped trickle of real traffic).
package probe
