package scenarios

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
)

// The timeline's steps, interpreted once for both engines. A step acts on
// an environment (stepEnv) that the simulator and the live engine each
// implement; what a step kind means is decided here: the events it emits
// and in which order, a fault that cannot be added stopping the run, a
// kill's fault.start before the streams it cuts, a reload that fails
// leaving the running config. Each engine only decides when a step starts
// and ends (virtual time or timers).

// stepEnv is what a timeline step acts on.
type stepEnv interface {
	// addFault adds f to provider prov's mock; ok is false when the run
	// has no such mock (nothing happens, no event).
	addFault(now time.Time, prov string, f faults.Spec) (id string, ok bool, err error)
	removeFault(prov, id string)
	// kill stops provider prov's process: its streams in flight are cut,
	// new connections refused. restart starts it again, afresh.
	kill(prov string)
	restart(prov string)
	// reload reloads the gateway (every replica) with st's config: the
	// policy, detectors, alert rules and probes. An error leaves the
	// running config serving.
	reload(now time.Time, st *Step) error
	// storeStep and sinkDown start (on) or end a store or sink step.
	storeStep(st *Step, on bool)
	sinkDown(name string, down bool)
	// fail stops the run with err; the first error is the run's.
	fail(err error)
	Emit(events.Event)
}

// faultRef is what a started fault or kill step changed on one target:
// the fault added to provider prov (id "" for a kill).
type faultRef struct {
	prov   string
	id     string
	target string
}

// stepper runs a scenario's timeline on an environment. Start and end may
// be called from two goroutines (the live engine's timeline, and the run's
// end).
type stepper struct {
	s   *Scenario
	env stepEnv

	mu     sync.Mutex
	active map[int][]faultRef // fault and kill steps started and not ended
}

func newStepper(s *Scenario, env stepEnv) *stepper {
	return &stepper{s: s, env: env, active: map[int][]faultRef{}}
}

func (sp *stepper) add(i int, f faultRef) {
	sp.mu.Lock()
	sp.active[i] = append(sp.active[i], f)
	sp.mu.Unlock()
}

// start starts step i at now.
func (sp *stepper) start(i int, now time.Time) {
	st := &sp.s.Timeline[i]
	env := sp.env
	switch st.Kind() {
	case StepFault:
		targets, _ := sp.s.expandTarget(st.Target)
		for _, k := range targets {
			prov, _, _ := strings.Cut(k, ":")
			id, ok, err := env.addFault(now, prov, st.faultFor(k))
			switch {
			case err != nil:
				// Never a fault.start for a fault that is not there: the
				// run stops with the error.
				env.fail(fmt.Errorf("%w: step %s: fault on %s: %w", ErrInvalid, st.Name, k, err))
				continue
			case !ok:
				continue
			}
			sp.add(i, faultRef{prov: prov, id: id, target: k})
			env.Emit(events.Event{Time: now, Kind: events.FaultStart, Name: st.Name, Target: k, Reason: string(st.Fault.Kind)})
		}
	case StepKill:
		targets, _ := sp.s.expandTarget(st.Kill)
		for _, k := range targets {
			sp.add(i, faultRef{prov: st.Kill, target: k})
			env.Emit(events.Event{Time: now, Kind: events.FaultStart, Name: st.Name, Target: k, Reason: "kill"})
		}
		// After fault.start: the streams it cuts end after it in both
		// engines' logs.
		env.kill(st.Kill)
	case StepReload:
		if err := env.reload(now, st); err != nil {
			env.Emit(events.Event{Time: now, Kind: events.ConfigReload, Name: st.Name, OK: false, Reason: firstLine(err.Error())})
		}
	case StepSinkDown:
		env.sinkDown(st.SinkDown, true)
	case StepStoreDown, StepStoreSlow:
		env.storeStep(st, true)
	}
}

// end ends step i at now.
func (sp *stepper) end(i int, now time.Time) {
	st := &sp.s.Timeline[i]
	env := sp.env
	switch st.Kind() {
	case StepFault, StepKill:
		sp.mu.Lock()
		refs := sp.active[i]
		delete(sp.active, i)
		sp.mu.Unlock()
		if refs == nil {
			return
		}
		if st.Kind() == StepKill {
			env.restart(st.Kill)
		}
		for _, f := range refs {
			if st.Kind() == StepFault {
				env.removeFault(f.prov, f.id)
			}
			env.Emit(events.Event{Time: now, Kind: events.FaultEnd, Name: st.Name, Target: f.target})
		}
	case StepSinkDown:
		env.sinkDown(st.SinkDown, false)
	case StepStoreDown, StepStoreSlow:
		env.storeStep(st, false)
	}
}

// endActive ends the fault and kill steps still active when the run ends.
func (sp *stepper) endActive(now time.Time) {
	for i := range sp.s.Timeline {
		sp.mu.Lock()
		_, active := sp.active[i]
		sp.mu.Unlock()
		if active {
			sp.end(i, now)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
