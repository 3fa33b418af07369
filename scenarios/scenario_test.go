package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"cmp"

	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestValidateReportsEveryProblem(t *testing.T) {
	_, err := Load("testdata/invalid.yaml")
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	var es yamlfile.Errors
	if !errors.As(err, &es) {
		t.Fatalf("err %T is not yamlfile.Errors", err)
	}
	want := []string{
		"testdata/invalid.yaml:10:14: traffic.0.arrival: must be poisson or uniform",
		"testdata/invalid.yaml:11:5: colour: unknown field",
		`testdata/invalid.yaml:19:9: timeline.1.at: step "two" overlaps step "one" on openai:gpt-4o`,
		`testdata/invalid.yaml:25:13: timeline.2.target: unknown target "mistral/large"`,
		`testdata/invalid.yaml:29:19: expect.targets.openai/gpt-5: unknown target "openai/gpt-5"`,
	}
	if len(es) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(es), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(es[i].Error(), w) {
			t.Errorf("problem %d = %q, want prefix %q", i, es[i].Error(), w)
		}
	}
}

func TestValidateCases(t *testing.T) {
	base := `version: 1
name: t
seed: 1
duration: 2m
providers: {file: ../../examples/gamedays/env/providers.yaml}
gateway: {config: ../../examples/gamedays/env/gateway.yaml}
alerts: {sinks: [{name: pager, kind: webhook}]}
traffic: [{route: chat, rate: 5/s}]
`
	tests := []struct {
		name, extra, want string
	}{
		{"valid", "timeline: [{name: a, at: 10s, for: 10s, target: openai, fault: {kind: reset}}]\n", ""},
		{"bad rate", "", ""},
		{"step past the end", "timeline: [{name: a, at: 3m, target: openai/gpt-4o, fault: {kind: reset}}]\n", "is not before the end of the run"},
		{"two actions", "timeline: [{name: a, at: 1s, target: openai/gpt-4o, fault: {kind: reset}, kill: openai}]\n", "set exactly one of"},
		{"bad fault field", "timeline: [{name: a, at: 1s, target: openai/gpt-4o, fault: {kind: http_error, status: 99}}]\n", "timeline.0.fault.status"},
		{"unknown sink", "timeline: [{name: a, at: 1s, sink_down: nobody}]\n", `unknown alert sink "nobody"`},
		{"unknown kill", "timeline: [{name: a, at: 1s, kill: mistral}]\n", `unknown provider "mistral"`},
		{"provider-wide overlap", "timeline: [{name: a, at: 10s, for: 30s, target: openai, fault: {kind: reset}}, {name: b, at: 20s, target: openai/gpt-4o, fault: {kind: reset}}]\n", `overlaps step "a" on openai:gpt-4o`},
		{"bad detected_by", "timeline: [{name: a, at: 10s, for: 10s, target: openai, fault: {kind: reset}}]\nexpect: {steps: {a: {detected_by: detector:nope}}}\n", `expect.steps.a.detected_by: "detector:nope" is not a detection source`},
		{"detected_by a detector", "timeline: [{name: a, at: 10s, for: 10s, target: openai, fault: {kind: reset}}]\nexpect: {steps: {a: {detected_by: detector:json_invalid}}}\n", ""},
		{"detected_by alternatives", "timeline: [{name: a, at: 10s, for: 10s, target: openai, fault: {kind: reset}}]\nexpect: {steps: {a: {detected_by: detector:json_invalid | health}}}\n", ""},
		{"detected_by a bad alternative", "timeline: [{name: a, at: 10s, for: 10s, target: openai, fault: {kind: reset}}]\nexpect: {steps: {a: {detected_by: health | bogus}}}\n", `expect.steps.a.detected_by: "health | bogus" is not a detection source`},
		{"unknown step expectation", "expect: {steps: {nope: {ttd: {max: 1s}}}}\n", `no timeline step named "nope"`},
		{"unknown alert rule", "expect: {alerts: [{name: nope}]}\n", `no alert rule named "nope"`},
		{"unknown route", "", ""},
		{"bad prompts file", "", ""},
		{"repeat needs every", "timeline: [{name: a, at: 10s, for: 5s, count: 3, target: openai/gpt-4o, fault: {kind: reset}}]\n", "timeline.0.every: required with count"},
		{"repeat longer than every", "timeline: [{name: a, at: 10s, for: 30s, every: 20s, target: openai/gpt-4o, fault: {kind: reset}}]\n", "timeline.0.for: a repeating step needs a for shorter than its every"},
		{"repeat overlaps another step", "timeline: [{name: a, at: 10s, for: 5s, every: 20s, target: openai/gpt-4o, fault: {kind: reset}}, {name: b, at: 52s, for: 2s, target: openai/gpt-4o, fault: {kind: reset}}]\n", `overlaps step "a"`},
		{"hash in a name", "timeline: [{name: a#1, at: 10s, for: 5s, target: openai/gpt-4o, fault: {kind: reset}}]\n", "kept for the names of repeats"},
		{"relative on the wrong kind", "timeline: [{name: a, at: 10s, for: 5s, target: openai/gpt-4o, fault: {kind: reset}, relative: {ttft: 3}}]\n", "timeline.0.relative.ttft: needs a ttft fault"},
		{"relative token rate", "timeline: [{name: a, at: 10s, for: 5s, target: openai, fault: {kind: token_rate}, relative: {token_rate: 0.5}}]\n", ""},
		{"step target pair", "timeline: [{name: a, at: 10s, for: 5s, target: openai/gpt-4o, fault: {kind: reset}}]\nexpect: {steps: {a: {targets: {anthropic/claude-sonnet-4: {ttd: {max: 1s}}}}}}\n", `expect.steps.a.targets.anthropic/claude-sonnet-4: step "a" does not fault`},
		{"slo latency needs a bound", "slo: {ttft: {}}\n", "slo.ttft: set max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := base + tt.extra
			switch tt.name {
			case "bad rate":
				src = strings.Replace(src, "rate: 5/s", "rate: 5/fortnight", 1)
				tt.want = "invalid rate unit"
			case "bad prompts file":
				src = strings.Replace(src, "rate: 5/s}", "rate: 5/s, prompts: {file: bad-prompts.jsonl}}", 1)
				tt.want = `bad-prompts.jsonl:2: want a JSON string or {"prompt": "..."}`
			case "unknown route":
				src = strings.Replace(src, "route: chat", "route: summarize", 1)
				tt.want = `unknown route "summarize"`
			}
			_, err := Parse("testdata/case.yaml", []byte(src))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "testdata/case.yaml:") {
				t.Errorf("error %q has no file:line:col", err)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		bad  bool
	}{
		{"20/s", 20, false}, {"600/m", 10, false}, {"3600/h", 1, false}, {"2.5", 2.5, false},
		{"ten/s", 0, true}, {"5/d", 0, true}, {"-1/s", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
			t.Errorf("ParseRate(%q) = %v, %v", tt.in, got, err)
		}
	}
	tr := Traffic{Ramp: &Ramp{From: 10, To: 30, Over: yamlfile.Duration(10 * time.Second)}}
	if r := tr.RateAt(5 * time.Second); r != 20 {
		t.Errorf("ramp at 5s = %v, want 20", r)
	}
	tr = Traffic{Schedule: []RateStep{{At: 0, Rate: 5}, {At: yamlfile.Duration(time.Minute), Rate: 50}}}
	if r := tr.RateAt(90 * time.Second); r != 50 {
		t.Errorf("schedule at 90s = %v, want 50", r)
	}
}

// TestSimDeterministic: the same file and seed give byte-identical
// result.json and events.jsonl; another seed gives another run.
func TestSimDeterministic(t *testing.T) {
	s, err := Load("testdata/short.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(seed uint64) (string, string) {
		res, err := Run(context.Background(), s, Options{Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := res.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		r, _ := os.ReadFile(filepath.Join(dir, "result.json"))
		e, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		return string(r), string(e)
	}
	r1, e1 := write(7)
	r2, e2 := write(7)
	if r1 != r2 || e1 != e2 {
		t.Fatal("same seed gave different output")
	}
	if len(e1) == 0 || !bytes.Contains([]byte(e1), []byte(`"kind":"fault.start"`)) {
		t.Fatal("events.jsonl has no fault.start")
	}
	r3, e3 := write(8)
	if r3 == r1 || e3 == e1 {
		t.Fatal("a different seed gave the same run")
	}
}

func TestRunShortScenario(t *testing.T) {
	res := runFile(t, "testdata/short.yaml")
	requirePass(t, res)
	f, ok := res.Fault("gpt4o-down", "openai/gpt-4o")
	if !ok || !f.Detected {
		t.Fatalf("fault not detected: %+v", f)
	}
	if res.Overall.Availability.Requests < 800 || res.Overall.Availability.Requests > 1000 {
		t.Errorf("requests = %d, want about 900 (10/s for 90s)", res.Overall.Availability.Requests)
	}
	if res.Events.ByKind["fault.start"] != 1 || res.Events.ByKind["fault.end"] != 1 {
		t.Errorf("fault events = %v", res.Events.ByKind)
	}
}

// requirePass fails the test with every expectation that did not hold.
// (scenariotest.RequireExpectations prints the whole scorecard; it cannot be
// used from inside this package.)
func requirePass(t *testing.T, res *score.Result) {
	t.Helper()
	if !res.Pass {
		t.Fatalf("game day %s failed (aborted=%v %s): %+v", res.Scenario, res.Aborted, res.AbortReason, res.Failed())
	}
}

func TestRunCanceled(t *testing.T) {
	s, err := Load("testdata/short.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || res.Pass {
		t.Fatalf("aborted=%v pass=%v, want an aborted, failed result", res.Aborted, res.Pass)
	}
}

func TestSimReloadStep(t *testing.T) {
	res := runFile(t, "testdata/reload.yaml")
	var got []string
	for _, e := range res.Log() {
		if e.Kind == "config.reload" {
			got = append(got, e.Name+"="+strconv.FormatBool(e.OK))
		}
	}
	if want := "bad-reload=false good-reload=true"; strings.Join(got, " ") != want {
		t.Errorf("config.reload events = %v, want %s", got, want)
	}
	if res.Availability() < 0.99 {
		t.Errorf("availability %.3f: a rejected reload must keep the old config serving", res.Availability())
	}
}

func TestSimStopWhen(t *testing.T) {
	res := runFile(t, "testdata/stop.yaml")
	if !res.Aborted || res.Pass || !strings.HasPrefix(res.AbortReason, "stop_when") {
		t.Fatalf("aborted=%v pass=%v reason=%q", res.Aborted, res.Pass, res.AbortReason)
	}
	// Every provider is dead from 5s (only a few answers are cached); the
	// success rate over the last 20s falls below 50% within seconds of the
	// first full window, long before the scheduled 5m.
	if res.Elapsed >= time.Minute || res.Elapsed < 20*time.Second {
		t.Errorf("stopped after %v of virtual time, want 20-30s", res.Elapsed)
	}
	if res.Events.ByKind["fault.end"] != res.Events.ByKind["fault.start"] {
		t.Errorf("faults left open: %v", res.Events.ByKind)
	}
}

// TestTimerHeapOrder: pushes and pops in any mix, the heap pops the least
// timer by (at, seq) each time, as a sorted list would.
func TestTimerHeapOrder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var h timerHeap
	var ref []timer // kept sorted
	seq := uint64(0)
	for i := range 20000 {
		if len(ref) == 0 || rnd.IntN(3) > 0 || i > 15000 && rnd.IntN(2) == 0 {
			seq++
			x := timer{at: int64(rnd.IntN(50)), seq: seq, idx: int32(i)}
			h.push(x)
			k, _ := slices.BinarySearchFunc(ref, x, func(a, b timer) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
			ref = slices.Insert(ref, k, x)
			continue
		}
		if got, want := h.pop(), ref[0]; got != want {
			t.Fatalf("step %d: popped %+v, want %+v", i, got, want)
		}
		ref = ref[1:]
	}
	for len(ref) > 0 {
		if got, want := h.pop(), ref[0]; got != want {
			t.Fatalf("popped %+v, want %+v", got, want)
		}
		ref = ref[1:]
	}
	if len(h) != 0 {
		t.Fatalf("%d timers left", len(h))
	}
}

// TestResultJSONRoundTrip: result.json is versioned and reads back into the
// same Result (what reports relies on).
func TestResultJSONRoundTrip(t *testing.T) {
	res := runFile(t, "testdata/short.yaml")
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back score.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Schema != score.SchemaVersion || back.Scenario != "short" || back.Seed != 7 || back.Mode != score.ModeSim {
		t.Fatalf("identity lost: schema=%d scenario=%q seed=%d mode=%q", back.Schema, back.Scenario, back.Seed, back.Mode)
	}
	b2, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatal("result.json does not round-trip byte for byte")
	}
}

// TestGatewayFileLoadedAsTheGatewayLoadsIt: a game day reads its gateway file
// with the gateway's own loader, so a section `brownout serve` refuses (an
// unknown field) is refused here too, at its file:line:col, and ${NAME}
// secrets need not be set for a simulated run.
func TestGatewayFileLoadedAsTheGatewayLoadsIt(t *testing.T) {
	dir := t.TempDir()
	gw := "version: 1\nproviders:\n  - name: openai\n    kind: openai\n    api_key: ${BROWNOUT_TEST_UNSET_KEY}\nroutes:\n  - name: chat\n    targets:\n      - {provider: openai, model: gpt-4o}\n"
	sc := "version: 1\nname: g\nseed: 1\nduration: 10s\nproviders:\n  inline:\n    - {name: openai, format: openai, models: [{name: gpt-4o}]}\ngateway: {config: gw.yaml}\ntraffic:\n  - {route: chat, rate: 1/s}\n"
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gw.yaml", gw)
	write("s.yaml", sc)
	if _, err := Load(filepath.Join(dir, "s.yaml")); err != nil {
		t.Fatalf("a valid gateway file with an unset secret: %v", err)
	}
	write("gw.yaml", gw+"evals: {}\n")
	_, err := Load(filepath.Join(dir, "s.yaml"))
	if err == nil || !strings.Contains(err.Error(), "gw.yaml:10:1: evals: unknown field") {
		t.Fatalf("err = %v, want the gateway's unknown-field error at gw.yaml:10:1", err)
	}
}

// TestRepeatsAndRelativeKnobs: every/count write a step out as NAME,
// NAME#2...; relative knobs scale each faulted model's own base.
func TestRepeatsAndRelativeKnobs(t *testing.T) {
	src := `version: 1
name: t
duration: 10m
providers: {file: ../../examples/gamedays/env/providers.yaml}
gateway: {config: ../../examples/gamedays/env/gateway.yaml}
traffic: [{route: chat, rate: 5/s}]
timeline:
  - {name: flap, at: 1m, every: 2m, count: 3, for: 30s, target: openai/gpt-4o, fault: {kind: http_error, status: 503}}
  - {name: tail, at: 8m, every: 1m, for: 10s, target: anthropic/claude-sonnet-4, fault: {kind: ttft}, relative: {ttft: 10}}
  - {name: slow, at: 30s, for: 20s, target: openai, fault: {kind: token_rate}, relative: {token_rate: 0.5}}
`
	s, err := Parse("testdata/case.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Timeline {
		got = append(got, fmt.Sprintf("%s@%s", st.Name, st.At))
	}
	want := []string{"flap@1m0s", "flap#2@3m0s", "flap#3@5m0s", "tail@8m0s", "tail#2@9m0s", "slow@30s"}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("timeline (-want +got):\n%s", d)
	}
	tail := s.Timeline[3].faultFor("anthropic:claude-sonnet-4")
	if tail.Delay == nil || tail.Delay.Fixed.D() != 4500*time.Millisecond || tail.Mode != "set" {
		t.Errorf("tail ttft = %+v mode %q, want set to 10 × 450ms", tail.Delay, tail.Mode)
	}
	slow := s.Timeline[5]
	if r := slow.faultFor("openai:gpt-4o").Rate; r != 45 {
		t.Errorf("token rate %v, want half of the model's own 90", r)
	}
}
