// Package score scores a game day: [Score] is a pure function over the
// event log both engines produce (events.Event) and the mock providers'
// journals ([JournalEntry]) that implements DESIGN.md's definitions
// (README-scoring.md states them): time to detect, mitigate and recover per
// fault step and target, flapping, cost, availability, bad answers served
// as success, latency penalty, retry amplification and quality. [Result]
// is what every report reads; [Expect] turns it into verdicts.
//
// Score reads a log in one pass, an event at a time. The simulator hands a
// [Feed] each event as it records it, so a simulated run is scored without
// reading its log back; the result is Score's on the finished log (a test
// in package scenarios checks it on every example game day).
//
// The package knows nothing of scenario files or engines: package
// scenarios loads a game day, plays it and hands the log here.
package score
