package scenarios

import (
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// Stream tolerance and verified continuation in the simulator, as the
// gateway applies them (gateway/lifecycle).

// malformedOK reports whether a streamed attempt skips an unparseable event
// (policy.max_malformed_events), as the gateway does.
func (m *sim) malformedOK() bool {
	s := m.eng.Settings()
	return s.MalformedLimit() > 0
}

// simCont is an attempt that continues a partial answer, checked as the
// gateway checks it (lifecycle.Continuation).
type simCont struct {
	on          bool
	fwd         string // what of the output reached the client
	deltas      int    // in how many deltas
	how, reason string // the stream.continuation event's Outcome and Reason
	try         int
}

// verify runs the planned output through the verifier: only what it lets
// through reaches the client, and a divergence ends the attempt at the
// chunk that showed it. It returns when the attempt ends.
func (c *simCont) verify(sent, question string, d *policy.Decision, plan *faults.Plan, obs *lifecycle.Observation, start, end time.Time) time.Time {
	mode := lifecycle.Prefill
	if d.Replay {
		mode = lifecycle.Replay
	}
	v, err := lifecycle.NewContinuation(mode, sent, nil)
	if err != nil {
		return end
	}
	v.Names(question) // the names the user's question uses, as the gateway reads them
	n := min(obs.Tokens, len(plan.Chunks))
	fwd, deltas, at := lifecycle.Verify(v, plan.Chunks[:n], obs.End == lifecycle.Answered && obs.Status == 200)
	*c = simCont{on: true, fwd: fwd, deltas: deltas, how: v.Completion(), reason: v.Reason(), try: d.Try}
	if at < 0 {
		return end
	}
	obs.End, obs.Diverged, obs.Tokens, obs.HaveUsage = lifecycle.Answered, true, at+1, false
	if at < len(plan.TokenTimes) {
		if t := start.Add(plan.TokenTimes[at]); t.Before(end) {
			end = t
		}
	}
	return end
}
