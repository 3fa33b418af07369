// Package scenarios runs game days: it loads the scenario YAML (traffic, a
// timeline of faults and expectations), plays it against the gateway and the
// mock providers — simulated in virtual time or live over loopback HTTP — and
// scores the one event log both engines produce.
//
// # Files
//
// [Load] strictly decodes a scenario (version 1) and validates it, reporting
// every problem at once with file:line:col: unknown fields, unknown targets
// and routes, overlapping steps on one target, expectations on steps or
// targets that do not exist. Providers come from a providers file (as
// `brownout mock -c` reads it) or inline; the gateway from a gateway config
// file, inline routes and policy, or the URL of a running gateway (black
// box). The JSON Schema of the format, for editors, is in package schemas.
//
// # Engines
//
// [Run] with [ModeSim] is a discrete-event simulation: a heap of timed events
// in virtual time (nothing sleeps), seeded from the scenario. Traffic arrives
// (Poisson or uniform, constant, ramped or scheduled rates); each request
// goes through the gateway's decision core (gateway/policy Begin, Next,
// Observe); each Send asks the mock behaviour model (mockprovider.Model.Plan)
// what the provider does at that instant and computes what the gateway would
// observe of the plan — deadlines and the stream watchdog against the plan's
// token times, resets, cuts, malformed events, truncation — scheduling the
// outcome at the right virtual time. Every complete answer, served or
// rejected as invalid output, feeds the silent-degradation detectors (evals,
// configured by the gateway config's detectors section), whose signals
// demote targets; when the gateway config enables probes, the probe
// scheduler (evals/probe) sends its probes to the mocks in virtual time and
// reports them to the decision core (probe.result events); the alert
// evaluator (gateway/alerts) runs on its period and deliveries succeed or
// fail as the scenario's sinks are up or down. The team's own Prometheus
// rules (alerts.prometheus_rules) are evaluated by the PromQL engine
// (package promrules) over the gateway's event-fed metrics
// (gateway.EventMetrics) scraped in virtual time; in live mode a real
// Prometheus server scrapes the gateway instead. The same file and seed
// give byte-identical result.json and events.jsonl.
//
// [ModeLive] starts the mock providers and the gateway in-process on
// loopback (or drives the external gateway at gateway.url, with the
// scenario's gateway.headers), sends open-loop load in the official wire
// formats in real time, prints progress, honours stop_when, and on
// cancellation stops cleanly with a partial result marked aborted.
//
// # Black boxes and bake-offs
//
// A gateway at a URL emits no events brownout can read: it is scored from
// what its users got and what the mocks journaled (by the X-Request-Id it
// forwards) — traffic shift by user requests for detection, degraded
// answers by the target that served them, cost from the providers file's
// prices. Every score says whether it was measured ([score.Result.Measured]);
// an expectation on one a configuration cannot measure is a scenario
// error. [Compare] plays one scenario against several gateways in turn
// ([Contestant]: a URL, or brownout's own by config), every one scored as
// a black box, for a report side by side.
//
// # Fleets
//
// gateway.replicas plays the gateway as a fleet behind a round-robin
// balancer (user request n on replica (n-1) mod N), each replica with its
// own decision core and detectors, its events stamped with its number
// (events.Event.Replica). gateway.state picks where their breakers live:
// memory, each its own; redis, shared through a store in the core's fleet
// mode (policy.Options.Fleet). The simulator models the store with
// fleet.Memory's atomic rules: a replica's proposals and trial results
// reach it at once, its answers and published changes come back
// gateway.propagation later, half-open trials are claimed from it, and a
// replica whose call fails (the store down) or times out (slower than the
// gateway's state.timeout) falls back to local breakers (state.degraded)
// and retries every second, resyncing when the store answers — as
// gateway/fleet does, deterministically per seed. Live, each replica is an
// in-process gateway on its own loopback listener and, with state: redis,
// the runner starts a redis-server on a free loopback port behind a
// loopback proxy ([ErrNoRedis] when it is not installed). Store steps
// (store: down, store: {slow: 200ms}) mean the same in both engines: down
// cuts and refuses the replicas' connections, what the store holds
// surviving; slow delays what the store sends.
//
// What a redis fleet shares, per engine. Live (gateway/fleet): breakers
// with the fleet-wide half-open trials, and every fleet.Options.Share
// (100ms) off the request path the routes' retry budgets, passive health
// demotions (reason fleet:…), client limits, idempotency records and
// cached answers. Simulated: breakers as above, and every 100ms of virtual
// time each replica reports its retry budgets and reads the others'
// demotions, and writes its own, as its fleet.Syncer (the gateway's own
// decisions) asks, the
// answer arriving gateway.propagation later and lost, as the breakers'
// calls are, with the store down or slower than state.timeout. The
// simulator models no client limits or idempotency keys (its traffic has
// neither), and its response cache ("answered before") is the fleet's in
// both states, as it is live only with state: redis. [score.FleetScore] scores the
// fleet and each replica: primary attempts per request during outages,
// half-open trials per recovery, fallbacks and resyncs.
// Two parts of a fleet are not yet modelled per replica in the simulator:
// active probes report to replica 1's core only, and the alert rules are
// evaluated once over the whole fleet's events; live, every replica probes
// and evaluates its own.
//
// # Scores
//
// Scoring lives in package score (scenarios/score): a pure function over
// the event log and the mocks' journals, the result types every report
// reads, and the expectations that turn scores into verdicts.
// scenariotest.RequireExpectations fails a Go test with the scorecard.
package scenarios
