package evals

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// traffic generates realistic responses for one target: output lengths
// normally distributed, a few natural length finishes, refusals, invalid JSON
// and empty tool arguments at low base rates. Fault knobs degrade it.
type traffic struct {
	rnd       *rand.Rand
	meanOut   float64
	sdOut     float64
	maxTokens int
	meanIn    float64

	// Fault knobs.
	wall         int // truncate every answer longer than wall at exactly wall tokens
	wallFinish   llm.FinishReason
	lengthShare  float64 // extra share cut short with finish_reason=length (not at one count)
	invalidShare float64 // structured answers that are not JSON
	refusalShare float64
	emptyShare   float64 // tool calls with empty arguments
}

func newTraffic(seed uint64) *traffic {
	return &traffic{rnd: rand.New(rand.NewPCG(seed, 0xb0)), meanOut: 300, sdOut: 80, maxTokens: 1024, meanIn: 600}
}

func (tr *traffic) response() (*llm.Response, bool, int) {
	r := tr.rnd
	out := int(math.Round(r.NormFloat64()*tr.sdOut + tr.meanOut))
	out = max(out, 1)
	resp := &llm.Response{FinishReason: llm.FinishStop}
	in := int(math.Max(50, r.NormFloat64()*tr.meanIn/5+tr.meanIn))
	if out >= tr.maxTokens {
		out, resp.FinishReason = tr.maxTokens, llm.FinishLength
	}
	if r.Float64() < 0.02 { // natural length finishes
		resp.FinishReason = llm.FinishLength
	}
	if r.Float64() < tr.lengthShare {
		out = max(1, out*int(40+r.IntN(50))/100)
		resp.FinishReason = llm.FinishLength
	}
	if tr.wall > 0 && out > tr.wall {
		out = tr.wall
		resp.FinishReason = tr.wallFinish
	}
	resp.Usage = llm.Usage{InputTokens: in, OutputTokens: out}
	structured := r.Float64() < 0.5
	switch {
	case r.Float64() < 0.01 || r.Float64() < tr.refusalShare:
		resp.Content = "I'm sorry, but I can't help with that."
	case structured:
		resp.Content = `{"answer": "Paris", "confidence": 0.93}`
		if r.Float64() < 0.005 || r.Float64() < tr.invalidShare {
			resp.Content = `Sure! Here is the JSON: {"answer": "Paris"`
		}
	default:
		resp.Content = "Paris is the capital of France."
	}
	if !structured && r.Float64() < 0.3 {
		args := `{"city": "Paris"}`
		if r.Float64() < 0.005 || r.Float64() < tr.emptyShare {
			args = ""
		}
		resp.ToolCalls = []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: args}}
		resp.FinishReason = llm.FinishToolCalls
	}
	return resp, structured, in
}

// drive feeds rps responses per second (Poisson arrivals) from start for dur
// through Observe and the detectors, and returns every signal.
func drive(d *Detectors, tr *traffic, target string, start time.Time, dur time.Duration, rps float64) []Signal {
	var out []Signal
	for now := start; now.Before(start.Add(dur)); {
		resp, structured, _ := tr.response()
		o := Observe(resp, structured, nil)
		o.Target, o.MaxTokens = target, tr.maxTokens
		out = append(out, d.Observe(now, o)...)
		now = now.Add(time.Duration(tr.rnd.ExpFloat64() / rps * float64(time.Second)))
	}
	return out
}

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

const target = "openai:gpt-4o"

func TestDetectorsNoFalseAlarmOnNormalTraffic(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			d := NewDetectors(DetectorConfig{})
			sig := drive(d, newTraffic(seed), target, t0, time.Hour, 4)
			require.Empty(t, sig)
		})
	}
}

func TestDetectorsNoFalseAlarmOnLowTraffic(t *testing.T) {
	// 0.3 req/s: windows hold fewer than MinSamples most of the time.
	d := NewDetectors(DetectorConfig{})
	require.Empty(t, drive(d, newTraffic(42), target, t0, 3*time.Hour, 0.3))
}

func TestDetectorsTruePositives(t *testing.T) {
	tests := []struct {
		name     string
		fault    func(*traffic)
		detector string
		detail   string
	}{
		{"silent truncation wall at 256", func(tr *traffic) { tr.wall, tr.wallFinish = 256, llm.FinishStop },
			DetectTokenWall, "at exactly 256 output tokens (baseline 0%), a power of two"},
		{"truncation wall reported as length", func(tr *traffic) { tr.wall, tr.wallFinish = 200, llm.FinishLength },
			DetectTokenWall, "at exactly 200 output tokens"},
		{"length finishes rising", func(tr *traffic) { tr.lengthShare = 0.3 },
			DetectFinishLength, "finish_reason=length in"},
		{"JSON stops parsing", func(tr *traffic) { tr.invalidShare = 0.4 },
			DetectJSONInvalid, "of structured responses are not valid JSON"},
		{"refusals rising", func(tr *traffic) { tr.refusalShare = 0.25 },
			DetectRefusal, "of responses are refusals"},
		{"empty tool arguments", func(tr *traffic) { tr.emptyShare = 0.3 },
			DetectEmptyToolArgs, "have empty or invalid arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDetectors(DetectorConfig{})
			tr := newTraffic(7)
			require.Empty(t, drive(d, tr, target, t0, 30*time.Minute, 4), "baseline phase")
			faultAt := t0.Add(30 * time.Minute)
			tt.fault(tr)
			sig := drive(d, tr, target, faultAt, 5*time.Minute, 4)
			var mine []Signal
			for _, s := range sig {
				if s.Detector == tt.detector {
					mine = append(mine, s)
				}
			}
			require.NotEmpty(t, mine, "signals: %v", sig)
			first := mine[0]
			require.Equal(t, target, first.Target)
			require.Contains(t, first.Detail, tt.detail)
			require.Greater(t, first.Value, first.Baseline)
			require.GreaterOrEqual(t, first.Samples, 20)
			ttd := first.Time.Sub(faultAt)
			require.Less(t, ttd, 45*time.Second, "time to detect")
			// It keeps firing, but signals once per Repeat, not per response.
			require.GreaterOrEqual(t, len(mine), 4)
			require.LessOrEqual(t, len(mine), 6)
			require.Contains(t, d.Firing(target), tt.detector)
		})
	}
}

func TestDetectorsTrafficMixChangeIsNotALengthSignal(t *testing.T) {
	d := NewDetectors(DetectorConfig{})
	tr := newTraffic(3)
	require.Empty(t, drive(d, tr, target, t0, 30*time.Minute, 4))
	// Clients lower max_tokens: many more length finishes, all at the cap,
	// which is the client's own doing.
	tr.maxTokens = 250
	require.Empty(t, drive(d, tr, target, t0.Add(30*time.Minute), 10*time.Minute, 4))
}

func TestDetectorsLongerPromptsAreAMixChange(t *testing.T) {
	d := NewDetectors(DetectorConfig{})
	tr := newTraffic(4)
	require.Empty(t, drive(d, tr, target, t0, 30*time.Minute, 4))
	tr.meanIn, tr.lengthShare = 3000, 0.3 // long documents now, and more length finishes
	for _, s := range drive(d, tr, target, t0.Add(30*time.Minute), 10*time.Minute, 4) {
		require.NotEqual(t, DetectFinishLength, s.Detector, "%s", s)
	}
}

func TestDetectorsColdStartJSONUsesPrior(t *testing.T) {
	// No baseline yet: JSON failures are judged against an expected rate of 0.
	d := NewDetectors(DetectorConfig{})
	tr := newTraffic(5)
	tr.invalidShare = 0.5
	sig := drive(d, tr, target, t0, 3*time.Minute, 4)
	require.NotEmpty(t, sig)
	require.Equal(t, DetectJSONInvalid, sig[0].Detector)
	require.Zero(t, sig[0].Baseline)
}

func TestDetectorsPerTargetIsolation(t *testing.T) {
	d := NewDetectors(DetectorConfig{})
	good, bad := newTraffic(10), newTraffic(11)
	start := t0
	for i := 0; i < 2; i++ { // baseline, then fault on bad only
		if i == 1 {
			bad.refusalShare = 0.4
		}
		end := start.Add(20 * time.Minute)
		for now := start; now.Before(end); now = now.Add(250 * time.Millisecond) {
			for _, p := range []struct {
				tr     *traffic
				target string
			}{{good, "a:good"}, {bad, "b:bad"}} {
				resp, structured, _ := p.tr.response()
				o := Observe(resp, structured, nil)
				o.Target = p.target
				for _, s := range d.Observe(now, o) {
					require.Equal(t, "b:bad", s.Target)
					require.Equal(t, 1, i)
				}
			}
		}
		start = end
	}
	// Refusals on a structured route are also invalid JSON.
	require.Contains(t, d.Firing("b:bad"), DetectRefusal)
	require.Empty(t, d.Firing("a:good"))
}

func TestDetectorsRecoverAndBaselineFreezes(t *testing.T) {
	d := NewDetectors(DetectorConfig{Relearn: 0}) // default 30m
	tr := newTraffic(12)
	drive(d, tr, target, t0, 30*time.Minute, 4)
	tr.emptyShare = 0.5
	// 20 minutes of fault: the baseline must not absorb it, so it still fires.
	sig := drive(d, tr, target, t0.Add(30*time.Minute), 20*time.Minute, 4)
	require.NotEmpty(t, sig)
	last := sig[len(sig)-1]
	require.Equal(t, DetectEmptyToolArgs, last.Detector)
	require.Less(t, last.Baseline, 0.05, "the baseline learned the fault")
	require.Greater(t, last.Time, t0.Add(49*time.Minute))
	// Fault over: it stops firing.
	tr.emptyShare = 0
	drive(d, tr, target, t0.Add(50*time.Minute), 5*time.Minute, 4)
	require.Empty(t, d.Firing(target))
}

func TestDetectorsRelearnAfterLongFault(t *testing.T) {
	d := NewDetectors(DetectorConfig{Relearn: Dur(10 * time.Minute)})
	tr := newTraffic(13)
	drive(d, tr, target, t0, 30*time.Minute, 4)
	tr.refusalShare = 0.3
	sig := drive(d, tr, target, t0.Add(30*time.Minute), 90*time.Minute, 4)
	require.NotEmpty(t, sig)
	// After relearning, the new normal stops signalling well before the end.
	require.Less(t, sig[len(sig)-1].Time, t0.Add(110*time.Minute))
	require.Empty(t, d.Firing(target))
}

func TestDetectorsTimeGoingBackwards(t *testing.T) {
	d := NewDetectors(DetectorConfig{})
	o := Observation{Target: target, OutputTokens: 10, FinishReason: llm.FinishStop}
	d.Observe(t0.Add(time.Minute), o)
	require.NotPanics(t, func() { d.Observe(t0, o) })
	require.NotPanics(t, func() { d.Observe(t0.Add(24*time.Hour), o) })
}

func TestDetectorsDisabled(t *testing.T) {
	d := NewDetectors(DetectorConfig{Refusal: Rule{Disabled: true}})
	tr := newTraffic(14)
	tr.refusalShare = 0.5
	for _, s := range drive(d, tr, target, t0, 10*time.Minute, 4) {
		require.NotEqual(t, DetectRefusal, s.Detector)
	}
}

func TestDetectorsDeterministic(t *testing.T) {
	run := func() []Signal {
		d := NewDetectors(DetectorConfig{})
		tr := newTraffic(21)
		drive(d, tr, target, t0, 20*time.Minute, 4)
		tr.wall = 256
		return drive(d, tr, target, t0.Add(20*time.Minute), 5*time.Minute, 4)
	}
	a, b := run(), run()
	require.NotEmpty(t, a)
	require.Equal(t, a, b)
}

func TestDetectorConfigValidate(t *testing.T) {
	require.NoError(t, DetectorConfig{}.Validate())
	require.ErrorContains(t, DetectorConfig{MinSamples: -1}.Validate(), "min_samples")
	require.ErrorContains(t, DetectorConfig{Refusal: Rule{Threshold: 1.5}}.Validate(), "refusal.threshold")
	c := NewDetectors(DetectorConfig{}).Config()
	require.Equal(t, 60*time.Second, c.Window.D())
	require.Equal(t, 20, c.MinSamples)
	require.InDelta(t, 0.2, c.TokenWall.Threshold.F(), 1e-9)
}

func Dur(d time.Duration) yamlfile.Duration { return yamlfile.Duration(d) }

func BenchmarkDetectors(b *testing.B) {
	tr := newTraffic(99)
	targets := []string{"openai:gpt-4o", "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash", "openai:gpt-4o-mini"}
	obs := make([]Observation, 4096)
	for i := range obs {
		resp, structured, _ := tr.response()
		obs[i] = Observe(resp, structured, nil)
		obs[i].Target, obs[i].MaxTokens = targets[i%len(targets)], 1024
	}
	d := NewDetectors(DetectorConfig{})
	now := t0
	i := 0
	// Warm up: fill the windows and baselines.
	for range 100_000 {
		d.Observe(now, obs[i%len(obs)])
		now = now.Add(10 * time.Millisecond)
		i++
	}
	b.ReportAllocs()
	for b.Loop() {
		d.Observe(now, obs[i%len(obs)])
		now = now.Add(10 * time.Millisecond) // 100 responses/s across 4 targets
		i++
	}
}

func TestSignalEvent(t *testing.T) {
	s := Signal{Time: t0, Target: target, Detector: DetectTokenWall, Value: 0.4, Baseline: 0.01, Samples: 80, Detail: "wall"}
	ev := s.Event()
	require.Equal(t, events.DetectorSignal, ev.Kind)
	require.Equal(t, target, ev.Target)
	require.Equal(t, DetectTokenWall, ev.Name)
	require.Equal(t, 0.4, ev.Value)
	require.Equal(t, "wall", ev.Reason)
	require.Equal(t, t0, ev.Time)
	require.Equal(t, "openai:gpt-4o token_wall: wall", s.String())
}

// Short structured answers of nearly constant length pile up at one count
// from the first request: that is their normal, not a wall.
func TestDetectorsUniformShortAnswersAreNotAWall(t *testing.T) {
	d := NewDetectors(DetectorConfig{})
	rnd := rand.New(rand.NewPCG(1, 2))
	var sig []Signal
	for i := range 6000 { // 10 minutes at 10/s
		o := Observation{Target: target, FinishReason: llm.FinishStop, OutputTokens: 10 + rnd.IntN(3), Structured: true, JSONValid: true}
		sig = append(sig, d.Observe(t0.Add(time.Duration(i)*100*time.Millisecond), o)...)
	}
	require.Empty(t, sig)
}

// A target that is bad from its first request still gets a baseline: the
// cold-start signal must not freeze an empty baseline forever.
func TestDetectorsColdStartStillLearnsBaseline(t *testing.T) {
	d := NewDetectors(DetectorConfig{})
	tr := newTraffic(31)
	tr.refusalShare = 0.3
	sig := drive(d, tr, target, t0, 2*time.Minute, 4)
	require.NotEmpty(t, sig, "prior of 0 refusals: the bad start is flagged")
	drive(d, tr, target, t0.Add(2*time.Minute), 40*time.Minute, 4)
	require.Empty(t, d.Firing(target), "after the baseline is established and relearned, it is the normal")
}

func TestDetectorConfigYAML(t *testing.T) {
	var cfg struct {
		Detectors DetectorConfig `yaml:"detectors"`
	}
	src := "detectors:\n  window: 2m\n  min_samples: 50\n  token_wall: {threshold: 30%}\n  refusal: {disabled: true}\n"
	_, err := yamlfile.Decode("gateway.yaml", []byte(src), &cfg)
	require.NoError(t, err)
	require.Equal(t, 2*time.Minute, cfg.Detectors.Window.D())
	require.Equal(t, 50, cfg.Detectors.MinSamples)
	require.InDelta(t, 0.3, cfg.Detectors.TokenWall.Threshold.F(), 1e-9)
	require.True(t, cfg.Detectors.Refusal.Disabled)
	_, err = yamlfile.Decode("gateway.yaml", []byte("detectors:\n  windw: 2m\n"), &cfg)
	require.EqualError(t, err, `gateway.yaml:2:3: windw: unknown field (did you mean "window"?)`)
}

// Targets past the first maxListed (found by hash, not in the list) are
// kept apart like the listed ones: a fault on one of each fires for it
// alone, with the same signals as a detector that saw only that target.
func TestDetectorsManyTargets(t *testing.T) {
	const n = maxListed + 4
	for _, faulty := range []int{2, maxListed + 1} {
		t.Run(fmt.Sprint("faulty", faulty), func(t *testing.T) {
			d, alone := NewDetectors(DetectorConfig{}), NewDetectors(DetectorConfig{})
			trs := make([]*traffic, n)
			for i := range trs {
				trs[i] = newTraffic(uint64(100 + i))
			}
			var got, want []Signal
			start := t0
			for phase := range 2 { // baseline, then the fault
				if phase == 1 {
					trs[faulty].refusalShare = 0.4
				}
				end := start.Add(15 * time.Minute)
				for now := start; now.Before(end); now = now.Add(500 * time.Millisecond) {
					for i, tr := range trs {
						resp, structured, _ := tr.response()
						o := Observe(resp, structured, nil)
						o.Target = fmt.Sprintf("p%d:m", i)
						sig := d.Observe(now, o)
						if i == faulty {
							got = append(got, sig...)
							want = append(want, alone.Observe(now, o)...)
						} else {
							require.Empty(t, sig, "target %d", i)
						}
					}
				}
				start = end
			}
			require.NotEmpty(t, want)
			require.Equal(t, want, got)
			require.Contains(t, d.Firing(fmt.Sprintf("p%d:m", faulty)), DetectRefusal)
		})
	}
}

// Skipping quiet detectors changes nothing: over traffic that degrades in
// every way and recovers, the signals and firing detectors are those of
// running every detector in full.
func TestDetectorsQuietShortcut(t *testing.T) {
	run := func() (sig []Signal, firing [][]string) {
		d := NewDetectors(DetectorConfig{})
		tr := newTraffic(7)
		start := t0
		for phase := range 6 {
			// Faults start and stop apart, so that each detector's state
			// differs from the others'.
			switch phase {
			case 1:
				tr.invalidShare, tr.wall, tr.wallFinish = 0.3, 256, llm.FinishStop
			case 2:
				tr.invalidShare, tr.wall = 0, 0
			case 3:
				tr.refusalShare, tr.emptyShare, tr.lengthShare = 0.3, 0.5, 0.3
			case 4: // between half the threshold and it
				tr.invalidShare, tr.refusalShare, tr.emptyShare, tr.lengthShare = 0.08, 0.06, 0.05, 0.1
			case 5:
				tr.invalidShare, tr.refusalShare, tr.emptyShare, tr.lengthShare = 0, 0, 0, 0
			}
			sig = append(sig, drive(d, tr, target, start, 20*time.Minute, 5)...)
			firing = append(firing, d.Firing(target))
			start = start.Add(20 * time.Minute)
		}
		return sig, firing
	}
	wantSig, wantFiring := func() ([]Signal, [][]string) {
		quietPath = false
		defer func() { quietPath = true }()
		return run()
	}()
	gotSig, gotFiring := run()
	detectors := map[string]bool{}
	for _, s := range wantSig {
		detectors[s.Detector] = true
	}
	require.Len(t, detectors, len(DetectorNames), "every detector signals: %v", detectors)
	require.Equal(t, wantSig, gotSig)
	require.Equal(t, wantFiring, gotFiring)
}

// TestDetectorsTokenWallIgnoresCompleteJSON: on a structured route, an
// answer that parses as JSON ended on its own, so a pile-up of complete
// documents at one count (short uniform answers: a classification, a small
// object) is no wall; the same pile-up of documents that no longer parse is.
func TestDetectorsTokenWallIgnoresCompleteJSON(t *testing.T) {
	for _, valid := range []bool{true, false} {
		d := NewDetectors(DetectorConfig{Window: yamlfile.Duration(5 * time.Second)})
		rnd := rand.New(rand.NewPCG(14, 9))
		walls := 0
		for i := range 3000 { // 5 minutes at 10/s; a pile-up at 12 after 2
			o := Observation{Target: target, FinishReason: llm.FinishStop, OutputTokens: 8 + rnd.IntN(9), Structured: true, JSONValid: true}
			if i >= 1200 && rnd.IntN(10) < 6 {
				o.OutputTokens, o.JSONValid = 12, valid
			}
			for _, s := range d.Observe(t0.Add(time.Duration(i)*100*time.Millisecond), o) {
				if s.Detector == DetectTokenWall {
					walls++
				}
			}
		}
		if valid {
			require.Zero(t, walls, "complete JSON documents at one count are no wall")
		} else {
			require.NotZero(t, walls, "cut documents piling up at one count are")
		}
	}
}
