// Package lifecycle is the request path between the decision core's
// decisions and the wire, shared by the HTTP gateway and the game-day
// simulator: the attempt loop around a policy.Attempt, the stream watchdog
// re-armed from every token, the classification of "what the upstream did"
// into an outcome, the stream commit and its in-band error, cancel, and
// reload. Like gateway/policy it performs no I/O, starts no goroutines and
// reads no clock: time is an argument. The gateway (gateway/chat.go) feeds
// it bytes, events and wall time; the simulator (scenarios/sim.go) feeds it
// the mocks' plans and virtual time. What is written once here cannot drift
// between the two engines.
//
// # Driving a request
//
// A Request wraps one policy.Attempt. The caller loops, as raft's node
// drives a RawNode:
//
//	var r lifecycle.Request
//	r.Begin(eng, now, policy.Request{ID: id, Route: "chat", Stream: true})
//	for {
//		s := r.Next(now)
//		switch s.Kind {
//		case policy.Send:
//			// Send the request to s.Target. Start a Watchdog with
//			// s.Timeouts; wake at what Start, Token and Finish return
//			// and call Fire. Before forwarding the first token call
//			// r.Commit. Describe what happened in an Observation and
//			// call r.Observe(now, lifecycle.Classify(&obs)).
//		case policy.Wait:
//			// Sleep until s.Until; if the client leaves, r.Cancel(now).
//		case policy.ServeCached:
//			// Answer from the cache; Observe OK or CacheMiss.
//		case policy.Fail:
//			// s.InBand set: end the committed stream with that in-band
//			// error event. Otherwise write s.Err. Final.
//		case policy.Done:
//			// Served. Final.
//		}
//	}
//
// # The attempt
//
// Between a Send and its Observe sits one Attempt (Request.Attempt), the
// same object in both engines: Prepare writes the request to send (the
// target's parameters, the prefill and the continuation budget; a request
// the target cannot take is an outcome, not a send), Malformed counts the
// unparseable events a stream may skip, Rejects holds a structured answer
// to JSON, and Text, ToolCall and Finish take the upstream's output in
// order and return what reaches the client — committing the stream at the
// first delta and, on a continuation, only what the join check lets
// through (Judged gives its verdict once). What reached the client is the
// Request's (Partial, Tools, Sent, ServedBy), for the next attempt to
// continue. The gateway's relay feeds it decoded events; the simulator
// feeds it a plan's chunks.
//
// When the client leaves with an attempt outstanding, call Cancel instead
// of Observe. On a configuration reload, Reload gives the engine new
// requests begin on.
//
// # Classification
//
// Classify is the one mapping from an Observation — how the attempt ended
// (End), the status, the provider's error, Retry-After, the tokens, the
// timeout that fired, usage — to a policy.Outcome. The shell fills the
// Observation from the connection and the stream decoder; Play fills it
// from a mock's plan on virtual time, applying the same deadlines and
// watchdog.
//
// # The watchdog
//
// Watchdog wraps policy.Watchdog with the timer arithmetic both engines
// need: Start returns the first deadline; Token returns an earlier one when
// a token brings the idle gap or the token-rate floor ahead of the armed
// deadline (the first token does when idle < first_token); Fire gives the
// verdict and the next deadline. A stream is never watched only at
// start+first_token.
//
// # Continuation
//
// When a Send carries Prefill or Replay, part of the answer already reached
// the client. A Continuation checks the fall-back's output against it before
// a byte is forwarded: a continuation is forwarded once JudgeJoin accepts
// how its first characters join the end of what was sent (a model that
// ignored the prefill answers from scratch: an opener, a capital glued to
// the cut word or after a mid-sentence cut, a heading or a code fence
// mid-line, the answer's start after a preamble; none is glued on), a
// restart (its output repeats what was sent) has the exact overlap
// skipped, a replay must repeat what was sent and only its rest is
// forwarded, and anything else diverged: set Observation.Diverged (a
// diverged prefill is replayed on routes with replay), and the stream ends
// in band. Both engines reach it through an Attempt: the gateway feeds it
// delta by delta from the wire, the simulator a plan's chunks, so both
// judge the same way.
//
// The continuation probe (ProbeRequest, JudgeProbe) verifies a target's
// prefill capability: a known text cut mid-word must be continued, not
// restarted.
package lifecycle
