package lifecycle

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

func engine(t testing.TB, log *events.Log) *policy.Engine {
	t.Helper()
	prefill := policy.Capabilities{Streaming: true, Tools: true, StructuredOutput: true, Prefill: true}
	cfg := policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{
		{Provider: "a", Model: "m", Retry: policy.Retry{Attempts: 2, Base: yamlfile.Duration(time.Second)}},
		{Provider: "b", Model: "m", Priority: 1, Capabilities: prefill},
	}}}}
	e, err := policy.New(cfg, policy.Options{Rand: rand.New(rand.NewPCG(1, 2)), Events: log})
	require.NoError(t, err)
	return e
}

// kinds lists the log's events as "kind target class outcome".
func kinds(log *events.Log) []string {
	var out []string
	for _, e := range log.Events() {
		s := string(e.Kind)
		for _, f := range []string{e.Target, e.Class, e.Outcome} {
			if f != "" {
				s += " " + f
			}
		}
		out = append(out, s)
	}
	return out
}

func TestRequestCutStreamContinuesOnPrefillTarget(t *testing.T) {
	log := &events.Log{}
	var r Request
	now := epoch
	r.Begin(engine(t, log), now, policy.Request{ID: "r1", Route: "chat", Stream: true})
	s := r.Next(now)
	require.Equal(t, policy.Send, s.Kind)
	require.Equal(t, "a:m", s.Target.Key())
	r.Commit(false)
	r.Observe(now, Classify(&Observation{End: Cut, Status: 200, Tokens: 4}))
	s = r.Next(now)
	require.Equal(t, policy.Send, s.Kind, "a cut stream fails over to the target that prefills")
	require.Equal(t, "b:m", s.Target.Key())
	require.True(t, s.Prefill)
	r.Observe(now, Classify(&Observation{Status: 400, Err: &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Message: "no prefill"}}))
	s = r.Next(now)
	require.Equal(t, policy.Fail, s.Kind)
	require.NotNil(t, s.InBand, "a committed stream ends in band")
	require.Equal(t, string(policy.CutMidStream), s.InBand.Code, "with the failure that cut it, not the fall-back's rejection")
}

func TestRequestToolDeltasEndTheRequest(t *testing.T) {
	log := &events.Log{}
	var r Request
	now := epoch
	r.Begin(engine(t, log), now, policy.Request{ID: "r1", Route: "chat", Stream: true})
	r.Next(now)
	r.Commit(true)
	r.Observe(now, Classify(&Observation{End: TimedOut, Timeout: policy.Stall, Status: 200, Tokens: 2}))
	s := r.Next(now)
	require.Equal(t, policy.Fail, s.Kind)
	require.Equal(t, 504, s.InBand.Status)
	require.Equal(t, []string{
		"request.start",
		"attempt.start a:m",
		"attempt.end a:m stall",
		"request.end stall failed",
	}, kinds(log), "no attempt is started that cannot continue the tool call")
	require.Equal(t, 1, r.Attempts())
}

func TestRequestCancelDuringBackoff(t *testing.T) {
	log := &events.Log{}
	var r Request
	now := epoch
	r.Begin(engine(t, log), now, policy.Request{ID: "r1", Route: "chat"})
	r.Next(now)
	r.Observe(now, Classify(&Observation{Status: 500}))
	s := r.Next(now)
	require.Equal(t, policy.Wait, s.Kind)
	r.Cancel(now.Add(100 * time.Millisecond))
	evs := log.Events()
	last := evs[len(evs)-1]
	require.Equal(t, events.RequestEnd, last.Kind)
	require.Equal(t, 499, last.Status)
	require.Equal(t, 1, last.Attempt)
	require.Equal(t, policy.Fail, r.Next(now).Kind)
	require.Nil(t, r.Next(now).InBand, "nothing was committed")
}

func TestReload(t *testing.T) {
	e := engine(t, &events.Log{})
	same, kept, err := Reload(e, e.Config(), policy.Options{})
	require.NoError(t, err)
	require.True(t, kept)
	require.Same(t, e, same)
	cfg := e.Config()
	cfg.Routes = append([]policy.Route(nil), cfg.Routes...)
	cfg.Routes[0].Name = "other"
	n, kept, err := Reload(e, cfg, policy.Options{Rand: rand.New(rand.NewPCG(1, 2)), Events: events.Discard})
	require.NoError(t, err)
	require.False(t, kept)
	require.NotSame(t, e, n)
	cfg.Routes = nil
	_, _, err = Reload(e, policy.Config{Routes: []policy.Route{{Name: "x"}}}, policy.Options{})
	require.Error(t, err, "a route without targets is invalid")
}
