package scenarios

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/faults"
)

// refusingFaults is a provider whose faults cannot be installed.
type refusingFaults struct{ provider }

var errNoFaults = errors.New("no faults here")

func (refusingFaults) AddFault(time.Time, faults.Spec) (string, error) { return "", errNoFaults }

// TestSimFaultThatCannotBeAdded: a fault step the provider refuses stops
// the run with the error; no fault.start claims a fault that is not there.
func TestSimFaultThatCannotBeAdded(t *testing.T) {
	s, err := Load("testdata/short.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := newSim(context.Background(), s, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	m.provs["openai"] = refusingFaults{m.provs["openai"]}
	m.run()
	if !errors.Is(m.err, errNoFaults) || !errors.Is(m.err, ErrInvalid) {
		t.Fatalf("run error %v, want the provider's, as invalid input", m.err)
	}
	for _, e := range m.log.Events() {
		if e.Kind == events.FaultStart {
			t.Fatalf("fault.start emitted for a fault that was refused: %+v", e)
		}
	}
	if m.end != int64(30*time.Second) {
		t.Errorf("the run ended at %v, want at the step (30s)", time.Duration(m.end))
	}
}
