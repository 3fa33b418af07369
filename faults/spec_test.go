package faults_test

import (
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/yamlfile"
)

func TestSpecYAML(t *testing.T) {
	src := `{kind: http_error, status: 429, retry_after: 2s, probability: 50%, model: gpt-4o, header: {x-tenant: a}}`
	var s faults.Spec
	if _, err := yamlfile.Decode("f.yaml", []byte(src), &s); err != nil {
		t.Fatal(err)
	}
	if s.Kind != faults.KindHTTPError || s.Status != 429 || s.RetryAfter.D() != 2*time.Second ||
		s.Probability == nil || s.Probability.F() != 0.5 || s.Model != "gpt-4o" || s.Header["x-tenant"] != "a" {
		t.Fatalf("%+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	src = `{kind: ttft, delay: {median: 1s, p99: 5s}, mode: set, ramp: {from: 0%, to: 100%, over: 5m}}`
	s = faults.Spec{}
	if _, err := yamlfile.Decode("f.yaml", []byte(src), &s); err != nil {
		t.Fatal(err)
	}
	if s.Delay.Dist != faults.DistLognormal || s.Ramp.Over.D() != 5*time.Minute {
		t.Fatalf("%+v", s)
	}
}

func TestSpecUnknownField(t *testing.T) {
	var s faults.Spec
	_, err := yamlfile.Decode("f.yaml", []byte("kind: reset\nstatuz: 500\n"), &s)
	if err == nil || !strings.Contains(err.Error(), "f.yaml:2:1: statuz: unknown field") {
		t.Fatalf("got %v", err)
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		spec  faults.Spec
		field string
	}{
		{faults.Spec{}, "kind"},
		{faults.Spec{Kind: "explode"}, "kind"},
		{faults.Spec{Kind: faults.KindCut, For: yamlfile.Duration(time.Second)}, "for"},
		{faults.Spec{Kind: faults.KindStall}, "for"},
		{faults.Spec{Kind: faults.KindTTFT}, "delay"},
		{faults.Spec{Kind: faults.KindReset, Selector: faults.Selector{Model: "[bad"}}, "model"},
		{faults.Spec{Kind: faults.KindReset, Selector: faults.Selector{First: -1}}, "first"},
		{faults.Spec{Kind: faults.KindReset, Selector: faults.Selector{Ramp: &faults.Ramp{To: 1}}}, "ramp.over"},
		{faults.Spec{Kind: faults.KindReset, Selector: faults.Selector{Probability: pct(0.5), Ramp: &faults.Ramp{To: 1, Over: 1}}}, "ramp"},
		{faults.Spec{Kind: faults.KindContentFilter, Stage: "everything"}, "stage"},
	}
	for _, tt := range tests {
		err := tt.spec.Validate()
		fe, ok := err.(*faults.FieldError)
		if !ok || fe.Field != tt.field {
			t.Errorf("%+v: got %v, want field %s", tt.spec, err, tt.field)
		}
	}
	for _, k := range faults.Kinds() {
		if faults.Params(k) == nil && k != faults.KindReset && k != faults.KindQualityDrop && k != faults.KindMalformedJSONContent &&
			k != faults.KindEmptyToolArgs && k != faults.KindMissingDone {
			t.Errorf("%s has no parameters", k)
		}
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"abc", []string{"abc"}},
		{"abcdefghi", []string{"abcd", "efgh", "i"}},
		{"héllo", []string{"hél", "lo"}},
		{"日本語", []string{"日", "本", "語"}},
		{"a日本", []string{"a日", "本"}},
	}
	for _, tt := range tests {
		got := faults.Tokenize(tt.in, nil)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || faults.CountTokens(tt.in) != len(tt.want) {
			t.Errorf("Tokenize(%q) = %q (count %d), want %q", tt.in, got, faults.CountTokens(tt.in), tt.want)
		}
	}
}
