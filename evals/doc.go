// Package evals judges model output, for three callers.
//
// Checks: a [Check] tests one [llm.Response] — json_valid, json_schema (JSON
// Schema via santhosh-tekuri/jsonschema), regex, contains, not_contains,
// length bounds, refusal phrases, a tool call with non-empty, schema-valid
// arguments, and the finish reason — and returns a [Result] with the reason
// for a failure. [Suite] files (strict YAML) group prompts with checks per
// route; [Run] sends them to a target and reports pass rates per check, and
// [Qualify] runs them against each primary/fallback pair and writes a
// [Qualification] file that the gateway reads at startup with
// [LoadQualification] and [Qualification.Qualified].
//
// Detectors: the failures that return 200 OK — answers truncated at a
// power-of-two token count, JSON that stops parsing, empty tool-call
// arguments, a rising refusal rate — are only visible in aggregate. The
// gateway calls [Observe] on every response it serves (cheap: no allocation,
// no JSON decode) and feeds the [Observation] to [Detectors.Observe], which
// compares a sliding window per target with that target's own decayed
// baseline and returns a [Signal] when a rate rises. Detectors are pure:
// time is an argument, so the simulator drives the same code in virtual time.
// Callers turn signals into detector.signal events ([Signal.Event]) and hand
// them to the policy engine (demote or open the breaker).
//
// Feed the detectors every complete response a target returns — including
// those the gateway then rejects as invalid output and retries elsewhere:
// they are the evidence. The finish_length and token_wall detectors need an
// established baseline (a window's worth of history); the JSON, refusal and
// empty-tool-argument detectors judge a target without one against a rate
// of zero, so a target that is bad from its first request is still flagged.
// Requests that stop at their own max_tokens are the client's doing and
// count toward neither finish_length nor token_wall.
//
// Streaming trade-off: a streamed answer reaches the client token by token,
// so it cannot be validated before it is served. The gateway observes a
// stream once it ends ([Accumulator], [ObserveStream]) — it counts toward
// detection — but only non-streamed structured responses can be validated
// and retried elsewhere before the client sees them.
//
// Active probes live in the evals/probe package.
package evals
