// Package policy is the gateway's decision core: routing, retries, the
// attempt cap, the retry budget, circuit breakers, passive health, SLA
// cutoffs, degradation tiers and the stream watchdog. It performs no I/O,
// starts no goroutines, reads no clock and draws no global random numbers:
// time is an argument of every method, randomness comes from the
// *rand.Rand in Options, and every decision and state change is an
// events.Event sent to Options.Events. The HTTP gateway and the game-day
// simulator drive the same code, so a simulated incident predicts the real
// one.
//
// # Driving a request
//
// An Engine holds the shared state (breakers and health per
// "provider:model", retry budgets per route) and is safe for concurrent use.
// Each user request gets an Attempt from Engine.Begin; an Attempt is used by
// one goroutine. The caller loops:
//
//	att := eng.Begin(now, policy.Request{ID: id, Route: "chat", Stream: true})
//	for {
//		d := att.Next(now)
//		switch d.Kind {
//		case policy.Send:    // attempt d.Target, then att.Observe(now, outcome)
//		case policy.Wait:    // sleep until d.Until (backoff before a retry)
//		case policy.ServeCached: // answer from cache, Observe OK (hit) or CacheMiss
//		case policy.Fail:    // return d.Err to the client; stop
//		case policy.Done:    // the last attempt's answer was served; stop
//		}
//	}
//
// What the caller must do with each decision:
//
//   - Send: apply d.Target.OverrideParams and DropParams to the request and
//     send it to d.Target (d.Target.Key() is "provider:model"). Enforce
//     d.Deadlines (connect, first token, total are absolute times); for a
//     stream, build NewWatchdog(now, d.Timeouts), feed it every token with
//     Watchdog.Token, wake up at Watchdog.Deadline and ask Watchdog.Check,
//     which returns the class of the timeout that fired. When d.Prefill is
//     set, part of the answer already reached the client: send it as an
//     assistant prefill so the target continues it, and forward only the
//     continuation; when d.Replay is set (Route.Replay), send the original
//     request and forward only what follows an exact repetition of what was
//     sent (gateway/lifecycle.Continuation checks both; a prefill the
//     target rejects with bad_request_param, or ignores (Outcome.Diverged:
//     its output does not join the partial answer), is replayed next, on
//     the same target). Then call Observe exactly once with the Outcome: the
//     Class (Classify maps an HTTP status, every one to an explicit class;
//     the watchdog names timeouts; the stream reader names cut_mid_stream
//     and malformed_stream; the transport names protocol_error for an
//     answer that is not valid HTTP; evals name truncated and
//     invalid_output), the status, TTFT, tokens, usage,
//     Retry-After, whether bytes reached the provider (BytesSent) and
//     whether tokens reached the client (Partial). Deliver an OK answer to
//     the client before or after Observe as it suits; the next decision
//     is Done.
//   - Wait: call Next again at d.Until, not before (Next keeps returning the
//     same Wait until then). This is the full-jitter backoff or the
//     provider's Retry-After before a retry on d.Target.
//   - ServeCached: the route's "cached" tier is next. Answer from the cache,
//     labelled stale, and Observe Class OK; on a miss Observe CacheMiss and
//     call Next again.
//   - Fail: return d.Err to the client now, shaped in the client's wire
//     format, with its RetryAfter as the Retry-After header. Fail is final:
//     either the request cannot go elsewhere (the provider's own error is
//     returned, e.g. a content filter refusal) or every tier is exhausted
//     (503, the honest error, returned at once).
//   - Done: the request is served. Final.
//
// When the client goes away — during a Wait, between attempts, or with an
// attempt outstanding — call Attempt.Cancel(now) instead of Observe: the
// request ends with request.end (failed, 499, class client_canceled), an
// outstanding attempt with attempt.end (client_canceled), and nothing is held
// against the target.
//
// Call Engine.Tick at Engine.NextTick (or periodically) so timed transitions
// — a breaker half-opening, a target recovering and its ramp ending — are
// emitted when they happen; they also happen lazily when a request needs
// them. Feed detector verdicts to Engine.Signal and active probe results to
// Engine.ProbeResult. Engine.State is a plain-data snapshot for /admin/state.
//
// # Mechanisms
//
// Routes map a name to targets ordered by degradation tier, then health
// (unhealthy targets go to the end of the line), then priority, with a
// weighted random choice among equals. Targets that lack a capability the
// request needs, whose context window is too small, or (after a partial
// answer) that cannot prefill are skipped; a client hint moves a target to
// the front on routes that allow hints.
//
// Each outcome Class decides what follows (see the Class constants): a retry
// on the same target (per its status code lists, after a full-jitter
// backoff or the provider's Retry-After up to a cap, and only while the
// route's retry budget allows), a fail-over, or the end of the request. A
// hard cap bounds upstream attempts per request; the cached tier does not
// count as one.
//
// Breakers are keyed provider:model and shared by every route that uses
// the model. They open on the error rate over a rolling window (once it
// holds a minimum of samples), on consecutive active probe failures, or on
// a Signal; they half-open after an open duration that doubles on every
// re-opening that follows closely on the last, admit a capped trickle of
// real requests, and close only if all of them succeed (a trial whose
// outcome never arrives re-opens it after Breaker.TrialTimeout). Each transition
// starts a new generation: an outcome observed for an attempt admitted
// under an older generation is discarded — by the breaker, passive health
// and the SLA windows alike — so a stream that ends after its breaker
// flipped changes nothing.
//
// Passive health is the soft signal: a few failures in a window, an SLA
// cutoff breached, or a detector's Demote move a target to the end of the
// line, where it is still used when everything before it fails. It recovers
// on its own when its failures age out, and its share of traffic then ramps
// back linearly over the cooldown. With alternatives available, health
// usually moves traffic before the breaker has its minimum of samples; the
// breaker is what stops traffic to a target that is failing for everyone.
//
// # Concurrency and configuration
//
// Each provider:model and each route has its own lock; the tables of routes
// and targets never change after New, so requests on different routes and
// targets do not contend. A closed, healthy target is not locked to be
// chosen or sent to: its breaker generation and that state are one atomic
// word, so a successful request takes two locks (its route's budget at
// Begin, its target's windows at Observe), three when a weighted draw
// breaks a tie. Engine.Reload builds the engine for a new
// configuration and carries the breaker and health state over. Config has
// YAML tags for the `routes:` and `policy:` sections of the gateway file;
// every field's zero value stands for its documented default, and
// Config.Validate reports every problem with its dotted path
// ("routes.0.targets.1.retry.base") for the caller to turn into
// file:line:col with yamlfile.
//
// # Dependencies
//
// The package imports only the standard library, llm, events and yamlfile
// (for the Duration and Percent field types). A test over `go list -deps`
// checks that nothing links net, net/http or math/rand (v1), and that no
// file imports os directly: fmt and yamlfile pull os in transitively, which
// cannot be avoided and does no I/O here. A source scan checks that no
// non-test file calls time.Now or time.Sleep.
package policy
