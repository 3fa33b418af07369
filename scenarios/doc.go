// Package scenarios runs game days: it loads the scenario YAML (traffic, a
// timeline of faults and expectations), drives the gateway's decision core and
// the mock providers through it — simulated in virtual time or live over
// loopback HTTP — and scores the one event log both engines produce.
//
// The scores follow DESIGN.md's definitions exactly (see README-scoring.md):
// time to detect, mitigate and recover per fault step and target, flapping,
// cost, availability, bad responses served as success, latency penalty, retry
// amplification and quality. [Score] is a pure function over the event log
// and the mocks' journals, so it is tested on hand-built logs.
//
// A simulated run is deterministic: the same file and seed give
// byte-identical result.json and events.jsonl.
package scenarios
