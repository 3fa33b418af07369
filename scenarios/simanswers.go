package scenarios

import (
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/llm"
)

// What the simulator does with a complete answer: the detectors, fed the
// observation the gateway feeds them (evals.Observe, Observation.Of), and
// the quality eval.

// complete runs the detectors on a complete answer, and the quality eval
// when it reaches the client (served).
func (m *sim) complete(r *simReq, now time.Time, served, corrupted bool) {
	target := r.tgt.key
	structured := r.structured
	ob := r.ob
	if !r.haveOb {
		refusals := m.refusals
		if r.filler && !structured {
			refusals = noPhrases // see fillerRefusalFree
		}
		if r.req.Stream && r.at != nil && r.at.Continuing() {
			// A continued stream: the detectors see the answer the client
			// received (what was sent before and the continuation), as the
			// gateway's do, with the fall-back's finish and usage.
			refusals = m.refusals
			ob = evals.ObserveStream(r.lc.Partial(), r.lc.Tools(), r.resp.FinishReason, r.resp.Usage, 0, structured, refusals)
		} else {
			ob = evals.Observe(r.resp, structured, refusals)
		}
	}
	ob.Of(target, r.req.Model, r.req.MaxTokens, r.promptEst)
	pass := !(ob.FinishReason == llm.FinishLength && (r.req.MaxTokens == 0 || ob.OutputTokens < r.req.MaxTokens)) &&
		(!structured || ob.JSONValid) && !ob.Refusal && ob.EmptyToolArgs == 0
	if corrupted {
		pass = false
	}
	if served {
		// The eval record of a served answer, as the live runner keeps
		// it; scoring only counts them by target.
		r.tgt.evals.N++
		if pass {
			r.tgt.evals.Passed++
		}
	}
	det := m.det
	if r.rep != nil {
		det = r.rep.det
	}
	if det != nil {
		for _, sg := range det.Observe(now, ob) {
			e := sg.Event()
			e.Time, e.RequestID, e.Route = now, r.id, r.req.Model
			e.Replica = r.replica()
			m.Emit(e)
			if m.detAction != "" {
				_ = r.eng.Signal(now, sg.Target, sg.Detector, m.detAction)
			}
		}
	}
	if !served {
		return
	}
	m.served[r.traffic][r.prompt] = true
}

// noPhrases is a phrase list that matches nothing (nil means the defaults).
var noPhrases = []string{}

// fillerRefusalFree reports whether p's filler corpus contains no refusal
// phrase the detectors look for: then no answer cut from it does either
// (evals.ContainsPhrase), and the simulator skips the per-answer scan. The
// verdicts are the same; only the cost of finding none goes.
func (m *sim) fillerRefusalFree(p provider) bool {
	return !evals.ContainsPhrase(p.FillerCorpus(), m.refusals)
}
