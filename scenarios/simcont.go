package scenarios

import (
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway/lifecycle"
)

// continueAttempt runs the planned output of a continuing attempt through
// the attempt (lifecycle.Attempt: the continuation check the gateway runs
// delta by delta): only what it lets through reaches the client, and a
// divergence ends the attempt at the chunk that showed it. It returns when
// the attempt ends.
func continueAttempt(a *lifecycle.Attempt, plan *faults.Plan, obs *lifecycle.Observation, start, end time.Time) time.Time {
	n := min(obs.Tokens, len(plan.Chunks))
	at := -1
	for i, ch := range plan.Chunks[:n] {
		if _, ok := a.Text(ch); !ok {
			at = i
			break
		}
	}
	if at < 0 && obs.End == lifecycle.Answered && obs.Status == 200 {
		if _, ok := a.Finish(); !ok {
			at = max(n-1, 0)
		}
	}
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
