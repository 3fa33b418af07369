package score

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/yamlfile"
)

// TestVerdictFiguresAgreeWithTheVerdict: a verdict compares the unrounded
// value and prints it as every report does (FormatDuration's 100 ms, two
// decimals of a percentage, three of a number) — except where that figure
// would contradict the verdict (829ms against <= 810ms printed as "800ms"),
// where it shows the digits the verdict turns on.
func TestVerdictFiguresAgreeWithTheVerdict(t *testing.T) {
	dur := func(d time.Duration) *yamlfile.Duration { x := yamlfile.Duration(d); return &x }
	ms := time.Millisecond
	tests := []struct {
		name string
		f    FaultScore
		ttd  DurationBound
		got  string
		pass bool
	}{
		{"rounded figure within the bound", FaultScore{TTD: 829 * ms}, DurationBound{Max: dur(30 * time.Second)}, "800ms (health)", true},
		{"rounding would hide a failure", FaultScore{TTD: 829 * ms}, DurationBound{Max: dur(810 * ms)}, "830ms (health)", false},
		{"rounding would hide a pass", FaultScore{TTD: 751 * ms}, DurationBound{Max: dur(760 * ms)}, "750ms (health)", true},
		{"at the bound exactly", FaultScore{TTD: 800 * ms}, DurationBound{Max: dur(800 * ms)}, "800ms (health)", true},
		{"just above the bound", FaultScore{TTD: 800*ms + 400*time.Microsecond}, DurationBound{Max: dur(800 * ms)}, "800.4ms (health)", false},
		{"a minimum", FaultScore{TTD: 9960 * ms}, DurationBound{Min: dur(10 * time.Second)}, "9.96s (health)", false},
		{"masked, rounding would hide a failure", FaultScore{TTD: 11430 * ms, Masked: true, MaskedBy: "a"}, DurationBound{Max: dur(11400 * ms)}, "11.43s (health, masked by a)", false},
		{"masked, rounding agrees", FaultScore{TTD: 11390 * ms, Masked: true, MaskedBy: "a"}, DurationBound{Max: dur(11350 * ms)}, "11.4s (health, masked by a)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.Step, tt.f.Target, tt.f.Detected, tt.f.DetectedBy = "s", "a:m", true, "health"
			e := &Expect{Steps: map[string]StepExpect{"s": {StepBounds: StepBounds{TTD: &tt.ttd}}}}
			vs := e.Judge(&Result{Faults: []FaultScore{tt.f}})
			if len(vs) != 1 || vs[0].Got != tt.got || vs[0].Pass != tt.pass {
				t.Errorf("verdicts %+v, want got %q pass %v", vs, tt.got, tt.pass)
			}
		})
	}

	f := func(x float64) *float64 { return &x }
	p := func(x float64) *yamlfile.Percent { v := yamlfile.Percent(x); return &v }
	number := func(b NumberBound, x float64) (string, bool) { _, pass := b.judge(x); return b.show(x), pass }
	percent := func(b PercentBound, x float64) (string, bool) { _, pass := b.judge(x); return b.show(x), pass }
	figures := []struct {
		name string
		got  figure
		want figure
	}{
		{"number within", fig(number(NumberBound{Max: f(1.3)}, 1.0061)), figure{"1.006", true}},
		{"number just above", fig(number(NumberBound{Max: f(1.3)}, 1.30004)), figure{"1.30004", false}},
		{"number just below a minimum", fig(number(NumberBound{Min: f(3)}, 2.9996)), figure{"2.9996", false}},
		{"percent within", fig(percent(PercentBound{Min: p(0.995)}, 0.99931)), figure{"99.93%", true}},
		{"percent just below", fig(percent(PercentBound{Min: p(0.995)}, 0.99496)), figure{"99.496%", false}},
		{"percent just above a maximum", fig(percent(PercentBound{Max: p(0.30)}, 0.30001)), figure{"30.001%", false}},
	}
	for _, tt := range figures {
		if tt.got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}

// figure is a printed figure and its verdict.
type figure struct {
	got  string
	pass bool
}

func fig(got string, pass bool) figure { return figure{got, pass} }

// TestLatencyPenaltyPerKind: `latency_penalty: {max: 2}` still bounds the
// first token; the per-kind form bounds inter-token and total too, so a
// stream whose first token stays fast while the rest crawls fails on
// inter_token; both forms at once, or neither, is a problem named by Check.
func TestLatencyPenaltyPerKind(t *testing.T) {
	crawl := Latency{TTFTPenalty: 1.1, InterTokenPenalty: 6, TotalPenalty: 4.5}
	res := &Result{Overall: Overall{Latency: crawl}, Faults: []FaultScore{{Step: "s", Target: "a:m", Latency: crawl}}}
	judge := func(src string) []string {
		t.Helper()
		var e Expect
		if _, err := yamlfile.Decode("t.yaml", []byte(src), &e); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range e.Judge(res) {
			out = append(out, fmt.Sprintf("%s %s %s %s %v", v.Name, v.Step, v.Want, v.Got, v.Pass))
		}
		return out
	}
	if got, want := judge("latency_penalty: {max: 2}"), []string{"latency_penalty  <= 2 1.1 true"}; !slices.Equal(got, want) {
		t.Errorf("legacy form: %q, want %q", got, want)
	}
	got := judge("steps: {s: {latency_penalty: {first_token: {max: 2}, inter_token: {max: 3}, total: {max: 5}}}}")
	want := []string{
		"latency_penalty s <= 2 1.1 true",
		"latency_penalty.inter_token s <= 3 6 false",
		"latency_penalty.total s <= 5 4.5 true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("per kind: %q, want %q", got, want)
	}
	for src, field := range map[string]string{
		"{max: 2, first_token: {max: 3}}": "first_token",
		"{}":                              "",
	} {
		var b PenaltyBound
		if _, err := yamlfile.Decode("t.yaml", []byte(src), &b); err != nil {
			t.Fatal(err)
		}
		if f, msg := b.Check(); f != field || msg == "" {
			t.Errorf("%s: Check() = %q, %q; want a problem at %q", src, f, msg, field)
		}
	}
}
