// Package events is brownout's one event log: the typed events that the
// decision core, the gateway, the mock providers and both game-day engines emit,
// and that scoring reads (DESIGN.md, "One event log, two engines").
//
// An [Event] is a flat value, so a log is plain data: recorded in memory with
// [Log], fanned out to live subscribers with [Bus] (the gateway's
// GET /admin/events), and stored as JSON lines with [WriteJSONL].
//
// This package performs no I/O of its own and does not link net/http, so the
// decision core can emit events.
package events
