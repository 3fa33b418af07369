// Package gateway is the HTTP shell around the decision core
// (gateway/policy): an OpenAI- and Anthropic-compatible gateway that routes
// each request through a pre-qualified failover chain of upstream providers.
//
// # Serving
//
// POST /v1/chat/completions (OpenAI) and POST /v1/messages (Anthropic) take
// a request whose model field names a route. The request is decoded into the
// normalized model (package llm), the route's policy.Engine decides what to
// do (policy.Attempt.Next), the shell does it — an upstream attempt through
// the target provider's codec (OpenAI, Anthropic, Gemini, Azure OpenAI or any
// OpenAI-compatible base URL), a backoff wait, an answer from the cache, or a
// fast provider-shaped error with Retry-After — and reports what happened
// (Attempt.Observe), until the request is served or failed.
//
// Streams are forwarded event by event, each flushed as it arrives; nothing
// is written before an attempt's first token, so a failure before it is
// invisible to the client. When a stream fails after tokens reached the
// client, the request continues on a target that accepts an assistant
// prefill (the partial answer is sent as the prefix to continue, with
// max_tokens less what was delivered) or, on routes with replay, on one that
// replays the original request; either way the fall-back's output goes
// through a lifecycle.Continuation before a byte of it is forwarded: a
// continuation is forwarded once its first characters pass the join check
// (a fall-back that ignored the prefill and answered from scratch — an
// answer opener, a capital glued to the cut word, a heading mid-line — is
// no continuation; on routes with replay it is replayed instead), a restart
// has its exact overlap skipped, a replay is forwarded past an exact
// repetition of what was sent, and anything else ends the stream. The
// prefill capability itself is verified, not trusted, with
// probes.continuation (a target that restarts a known cut text continues
// no answer), and continuation.instruction adds an instruction to continue
// to every prefill request. A stream that cannot be completed ends with
// an explicit in-band error event (an OpenAI error chunk, an Anthropic
// `event: error`) — never with the end marker after a truncated answer,
// never with two answers spliced, and always with the failure that cut the
// stream rather than a fall-back's own rejection. Each completion is a
// stream.continuation event naming both targets and how (continued,
// replayed, failed); the chunks that follow name the fall-back's model, and
// the X-Brownout-Target trailer names the target that produced the end.
// Usage sent to the client counts what it received; per-attempt usage keeps
// what each upstream billed. An unparseable event in a stream that goes on
// is skipped and counted (a stream.malformed event and
// brownout_stream_malformed_events_total), up to
// policy.max_malformed_events per attempt (default 3), past which the
// attempt fails as malformed_stream. The request path between the decision
// core and the wire — the attempt loop, the stream commit and its in-band
// error, the continuation check, the classification of what the upstream
// did, cancel and reload — is package lifecycle, which the game-day
// simulator drives too. Each attempt runs under a lifecycle.Watchdog on real
// time (first token, idle gap, token-rate floor, total), its one timer moved
// to the next deadline after every token, and a connect timeout reaches the
// dialer through the request context.
//
// Upstreams are reached with net/http's Transport (NewTransport): HTTP/2
// when a TLS provider negotiates it, as real providers do, HTTP/2 in
// cleartext for protocol h2c, HTTP/1.1 otherwise. Its limits are part of the
// gateway's security boundary: an answer's header, 1xx answers included, is
// bounded (64 KiB); a connection that receives bytes while no request is in
// flight on it is never reused; an HTTP/1.1 connection takes a new request
// only once it has been quiet for TransportOptions.ReuseQuiet (250 ms)
// after its last answer, so that bytes an upstream sends after an answer
// are never read as another request's answer (cleartext connections are
// spread over slots, so that a request goes to the connection quiet the
// longest); an answer read on it before the request was sent is
// discarded and the request sent again. An upstream that answers with a
// 101, a 1xx final answer or a redirect (3xx, never followed), or whose
// answer is not valid HTTP, fails the attempt as a protocol_error.
//
// Served answers feed the silent-degradation detectors (package evals):
// a rising rate of invalid JSON, refusals, empty tool arguments or answers
// cut at a token wall becomes a detector.signal event and demotes (or trips)
// the target. A non-streamed structured answer that is not valid JSON is not
// served at all: it fails over as invalid_output.
//
// Active probes (probes:, ProbesConfig) cover targets too cold for passive
// signals: a Server-owned loop runs an evals/probe Scheduler, sends a small
// synthetic request to every target through its provider client every 30–60 s
// (seeded jitter), judges the answer's content with eval checks and reports
// it to the policy (Engine.ProbeResult) and as a probe.result event; three
// consecutive failures open the breaker, a 429 only delays the next probe by
// its Retry-After, and a probe never closes a breaker. With a qualification
// file (qualification:, QualificationConfig) every fallback of a route must
// have been qualified for it by `brownout evals qualify`: an unqualified one is
// a startup warning (log and config.warning event) or a load error.
//
// Responses look native to the client whatever format served them: they
// name the model (route) the client asked for, and response and tool call
// IDs have the client's format's prefixes (chatcmpl-/call_, msg_/toolu_,
// resp_/msg_/fc_/call_, Gemini's own responseId shape; llm/inbound and the
// codecs); an Anthropic stream's message_start carries the input
// tokens. The headers X-Brownout-Target, X-Brownout-Attempts and
// X-Brownout-Tier say which target served, how many upstream attempts and
// which degradation tier; X-Request-Id is forwarded upstream (generated
// when absent) and is also Request-Id for Anthropic clients. A target whose
// wire format cannot express the request (a flagged tool result for Chat
// Completions, say) is skipped: an attempt.end of class "skipped" with the
// reason, not an attempt, and the next target serves. So is a target of
// another format when the request carries a field only the client's format
// knows (Anthropic thinking, a Responses reasoning setting, Gemini
// safetySettings): it is never dropped silently, and when no target can
// honour it the client gets the 400 naming it — unless the client sent
// X-Brownout-Best-Effort: drop, when it is dropped and named in
// X-Brownout-Dropped. Gemini is served under /v1beta and /v1. A Responses
// request naming previous_response_id continues the conversation the
// gateway kept (responses.store_ttl, ResponsesConfig; shared by a fleet),
// on any target, or gets the Responses API's own 400. Every path the
// gateway does not serve answers 404 (405 for another method) in the JSON
// shape of the API the path belongs to. An Idempotency-Key coalesces concurrent duplicates
// and replays a completed answer within its TTL. Complete answers are cached
// by route, target and normalized request for the "cached" tier, which
// serves them labelled stale (X-Brownout-Cache: stale).
//
// # Operating
//
// GET /v1/models lists the routes; /healthz, /readyz and /metrics (Prometheus,
// brownout_ prefix) are for the platform; GET /admin/state (breakers, health,
// budgets, alerts, config version) and GET /admin/events (the event log as
// server-sent events) are protected by the admin token when one is set.
// Every attempt is metered (usage records, one JSONL line per attempt, see
// package gateway/usage) and priced from the target's pricing table. Alert
// rules (package gateway/alerts) are evaluated periodically and delivered to
// webhook and log sinks; a failed delivery is an alert.delivered event with
// OK false and a metric.
//
// Traces (package gateway/tracing; tracing:, TracingConfig, or the
// standard OTEL_* variables; off by default) are exported over OTLP/HTTP
// or OTLP/gRPC: every inbound request is a server span, the child of the
// caller's traceparent, and every upstream attempt a client span under it
// whose context is sent upstream as traceparent, with the GenAI semantic
// conventions' attributes, the attempt's number, reason (first, retry,
// failover), target, tier, continuation and outcome class, and the
// retries, fail-overs, continuations, skips, backoffs and watchdog verdicts
// as span events. Off, the server holds no tracer and the request path
// makes no tracing call; Options.TracerProvider takes spans in process.
//
// Configuration is one YAML file (LoadConfig: strict, file:line:col errors,
// ${NAME} environment references for secrets, which never appear in logs,
// events or errors). Reload swaps a new configuration in atomically while
// requests in flight finish on the old one; Watch reloads on SIGHUP and when
// the file changes, and an invalid file is rejected while the running
// configuration keeps serving. On shutdown Serve turns /readyz to 503
// first and keeps serving for a lame-duck period (shutdown.lame_duck,
// default 5s), then closes its listener and drains requests and streams up
// to shutdown.drain (default 30s); a stream still open then ends with an
// in-band error event in its API's shape, never a bare TCP close, and a
// request still waiting gets a 503 shutting_down; their events carry class
// shutdown (never client_canceled, never held against a target). A panic
// in one request is recovered and never takes the process down.
package gateway
