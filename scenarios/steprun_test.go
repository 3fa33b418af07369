package scenarios

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
)

// stepLog is a stepEnv that records what the steps do, one line each.
type stepLog struct {
	lines  []string
	refuse string // a provider whose faults cannot be added
	err    error
}

func (e *stepLog) add(format string, a ...any) { e.lines = append(e.lines, fmt.Sprintf(format, a...)) }

func (e *stepLog) addFault(_ time.Time, prov string, f faults.Spec) (string, bool, error) {
	if prov == e.refuse {
		return "", false, errors.New("refused")
	}
	e.add("add %s %s", prov, f.Kind)
	return prov + "-1", true, nil
}
func (e *stepLog) removeFault(prov, id string)   { e.add("remove %s %s", prov, id) }
func (e *stepLog) kill(prov string)              { e.add("kill %s", prov) }
func (e *stepLog) restart(prov string)           { e.add("restart %s", prov) }
func (e *stepLog) storeStep(st *Step, on bool)   { e.add("store %s %v", st.Name, on) }
func (e *stepLog) sinkDown(name string, on bool) { e.add("sink %s %v", name, on) }
func (e *stepLog) fail(err error) {
	if e.err == nil {
		e.err = err
	}
	e.add("fail")
}
func (e *stepLog) reload(_ time.Time, st *Step) error {
	e.add("reload %s", st.Reload.Config)
	return errors.New("bad config\nsecond line")
}
func (e *stepLog) Emit(ev events.Event) {
	e.add("event %s %s %s ok=%v %s", ev.Kind, ev.Name, ev.Target, ev.OK, ev.Reason)
}

// The step interpreter both engines run: the events each step kind emits
// and the order of its effects, written once.
func TestStepper(t *testing.T) {
	c := diffCase{name: "steps", duration: "3s", timeline: []string{
		"{name: f, at: 100ms, for: 500ms, target: a/m, fault: {kind: http_error, status: 503}}",
		"{name: down, at: 200ms, for: 500ms, kill: b}",
		"{name: swap, at: 300ms, reload: {config: gateway-b-first.yaml}}",
		"{name: quiet, at: 400ms, for: 500ms, sink_down: oncall}",
	}}
	s, err := c.scenario()
	require.NoError(t, err)
	env := &stepLog{}
	sp := newStepper(s, env)
	now := Epoch
	for i := range s.Timeline {
		sp.start(i, now)
	}
	sp.end(0, now)
	sp.end(3, now)
	sp.endActive(now) // the kill is still active
	sp.end(1, now)    // ended already: nothing
	require.Equal(t, []string{
		"add a http_error",
		"event fault.start f a:m ok=false http_error",
		"event fault.start down b:m2 ok=false kill",
		"kill b",
		"reload gateway-b-first.yaml",
		"event config.reload swap  ok=false bad config",
		"sink oncall true",
		"remove a a-1",
		"event fault.end f a:m ok=false ",
		"sink oncall false",
		"restart b",
		"event fault.end down b:m2 ok=false ",
	}, env.lines)

	// A fault that cannot be added stops the run, with no fault.start.
	env = &stepLog{refuse: "a"}
	sp = newStepper(s, env)
	sp.start(0, now)
	sp.end(0, now)
	require.Equal(t, []string{"fail"}, env.lines)
	require.ErrorIs(t, env.err, ErrInvalid)
}
