package evals

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// Detector names, as they appear in [Signal] and detector.signal events.
const (
	DetectFinishLength  = "finish_length"   // share of finish_reason=length rising, traffic mix unchanged
	DetectTokenWall     = "token_wall"      // output-token counts piling up at one value
	DetectJSONInvalid   = "json_invalid"    // JSON parse failures rising on structured routes
	DetectRefusal       = "refusal_rate"    // refusal phrases rising
	DetectEmptyToolArgs = "empty_tool_args" // tool calls with empty or unparsable arguments rising
)

// DetectorNames lists the detector names in a fixed order.
var DetectorNames = []string{DetectFinishLength, DetectTokenWall, DetectJSONInvalid, DetectRefusal, DetectEmptyToolArgs}

const numDetectors = 5

// Rule tunes one detector. Threshold is the rise of the detector's rate over
// the target's baseline that fires it (absolute, as a fraction).
type Rule struct {
	Disabled  bool             `yaml:"disabled" json:"disabled,omitempty"`
	Threshold yamlfile.Percent `yaml:"threshold" json:"threshold,omitempty"`
}

// DetectorConfig is the `detectors:` section of the gateway configuration.
// Its zero value is usable: every zero field takes the default its comment
// states.
type DetectorConfig struct {
	// Window is the recent span compared with the baseline. Default 60s.
	Window yamlfile.Duration `yaml:"window" json:"window,omitempty"`
	// BaselineHalfLife is how fast the baseline forgets: it is an
	// exponentially decayed history of the windows that aged out. Default 10m.
	BaselineHalfLife yamlfile.Duration `yaml:"baseline_half_life" json:"baseline_half_life,omitempty"`
	// MinSamples is the fewest relevant observations in the window (and in the
	// baseline, where one is needed) before a detector may fire. Default 20.
	MinSamples int `yaml:"min_samples" json:"min_samples,omitempty"`
	// PValue bounds the chance that the baseline rate alone produced the
	// window's rate (a Chernoff bound: exp(-n·KL(window‖baseline))), on top of
	// the threshold, so small windows do not fire on noise. Baseline rates
	// below 0.5% count as 0.5%. Default 1e-6.
	PValue float64 `yaml:"p_value" json:"p_value,omitempty"`
	// Repeat is how often a detector that keeps firing signals again.
	// Default: Window.
	Repeat yamlfile.Duration `yaml:"repeat" json:"repeat,omitempty"`
	// Relearn: while any detector of a target fires, its baseline is frozen
	// so the degradation does not become the new normal; after Relearn of
	// continuous firing it learns again. Default 30m.
	Relearn yamlfile.Duration `yaml:"relearn" json:"relearn,omitempty"`
	// MixTolerance is how far the window's mean input tokens or mean
	// max_tokens may move from the baseline's before the finish_length
	// detector considers the traffic mix changed and stays quiet. Default 25%.
	MixTolerance yamlfile.Percent `yaml:"mix_tolerance" json:"mix_tolerance,omitempty"`

	// FinishLength: default threshold 15%. Needs a baseline.
	FinishLength Rule `yaml:"finish_length" json:"finish_length"`
	// TokenWall: share of the window's responses at one exact output-token
	// count, above that count's baseline share. Default 20%. Needs a
	// baseline. Responses that stopped at the request's own max_tokens do
	// not count.
	TokenWall Rule `yaml:"token_wall" json:"token_wall"`
	// JSONInvalid: rise of the parse-failure rate on structured routes.
	// Default 10%; without a baseline the expected failure rate is 0.
	JSONInvalid Rule `yaml:"json_invalid" json:"json_invalid"`
	// Refusal: rise of the refusal rate. Default 10%; without a baseline 0.
	Refusal Rule `yaml:"refusal" json:"refusal"`
	// EmptyToolArgs: rise of the share of tool-calling responses with an
	// empty or unparsable call. Default 10%; without a baseline 0.
	EmptyToolArgs Rule `yaml:"empty_tool_args" json:"empty_tool_args"`
}

// withDefaults returns c with every zero field set to its default.
func (c DetectorConfig) withDefaults() DetectorConfig {
	def := func(d *yamlfile.Duration, v time.Duration) {
		if *d <= 0 {
			*d = yamlfile.Duration(v)
		}
	}
	def(&c.Window, 60*time.Second)
	def(&c.BaselineHalfLife, 10*time.Minute)
	def(&c.Repeat, c.Window.D())
	def(&c.Relearn, 30*time.Minute)
	if c.MinSamples <= 0 {
		c.MinSamples = 20
	}
	if c.PValue <= 0 {
		c.PValue = 1e-6
	}
	if c.MixTolerance <= 0 {
		c.MixTolerance = 0.25
	}
	thr := func(r *Rule, v float64) {
		if r.Threshold <= 0 {
			r.Threshold = yamlfile.Percent(v)
		}
	}
	thr(&c.FinishLength, 0.15)
	thr(&c.TokenWall, 0.20)
	thr(&c.JSONInvalid, 0.10)
	thr(&c.Refusal, 0.10)
	thr(&c.EmptyToolArgs, 0.10)
	return c
}

// Validate reports a configuration error naming the field.
func (c DetectorConfig) Validate() error {
	if c.MinSamples < 0 {
		return fmt.Errorf("min_samples: %d is negative", c.MinSamples)
	}
	if c.PValue < 0 || c.PValue >= 1 {
		return fmt.Errorf("p_value: %g is not in (0, 1)", c.PValue)
	}
	for _, r := range []struct {
		name string
		rule Rule
	}{{"finish_length", c.FinishLength}, {"token_wall", c.TokenWall}, {"json_invalid", c.JSONInvalid},
		{"refusal", c.Refusal}, {"empty_tool_args", c.EmptyToolArgs}} {
		if r.rule.Threshold < 0 || r.rule.Threshold > 1 {
			return fmt.Errorf("%s.threshold: %v is not in [0%%, 100%%]", r.name, r.rule.Threshold)
		}
	}
	return nil
}

// Signal says a detector fired for a target: its rate in the window (Value)
// against the target's own baseline rate (Baseline).
type Signal struct {
	Time     time.Time `json:"time"`
	Target   string    `json:"target"`
	Detector string    `json:"detector"`
	Value    float64   `json:"value"`
	Baseline float64   `json:"baseline"`
	Samples  int       `json:"samples"` // relevant observations in the window
	Detail   string    `json:"detail"`  // one human-readable line
}

// Event returns the detector.signal event for s: Name is the detector,
// Value the window's rate, Reason the detail (which states the baseline).
func (s Signal) Event() events.Event {
	return events.Event{Time: s.Time, Kind: events.DetectorSignal, Target: s.Target, Name: s.Detector,
		Value: s.Value, Reason: s.Detail}
}

func (s Signal) String() string {
	return fmt.Sprintf("%s %s: %s", s.Target, s.Detector, s.Detail)
}

// counted reports whether o counts toward the token-wall denominator: it
// has a token count and did not stop at the request's own max_tokens (a
// pile-up at the client's cap is the client's doing, not the provider's).
func counted(o *Observation) bool {
	return o.OutputTokens > 0 && (o.MaxTokens <= 0 || o.OutputTokens < o.MaxTokens)
}

// walled reports whether o can stand at a token wall: counted, and not a
// complete JSON document on a structured route. A wall cuts an answer
// short, and a cut JSON document does not parse; short structured answers
// (a classification, a small object) pile up at a few counts by nature, and
// counting them made the detector fire on healthy traffic (seed 14 of
// malformed-json-structured: 16 false alarms, 30% of answers at exactly 12
// tokens against a baseline of 9%). Complete documents still count in the
// denominator, so a wall's share is of every answer.
func walled(o *Observation) bool {
	return counted(o) && !(o.Structured && o.JSONValid)
}

// counts are the per-bucket tallies of observations.
type counts struct {
	n, length             float64
	inSum, maxSum, maxN   float64
	structured, jsonValid float64
	refusal               float64
	tool, emptyTool       float64
	tokN                  float64 // observations with OutputTokens > 0
}

func (c *counts) add(o *Observation) {
	c.n++
	// A length finish at the request's own max_tokens is the client's cap
	// working; only the others (cut short of the cap, or cap unknown) count.
	if o.FinishReason == llm.FinishLength && (o.MaxTokens <= 0 || o.OutputTokens < o.MaxTokens) {
		c.length++
	}
	c.inSum += float64(o.InputTokens)
	if o.MaxTokens > 0 {
		c.maxSum += float64(o.MaxTokens)
		c.maxN++
	}
	if o.Structured {
		c.structured++
		if o.JSONValid {
			c.jsonValid++
		}
	}
	if o.Refusal {
		c.refusal++
	}
	if o.ToolCalls > 0 {
		c.tool++
		if o.EmptyToolArgs > 0 {
			c.emptyTool++
		}
	}
	if counted(o) {
		c.tokN++
	}
}

func (c *counts) plus(d *counts, sign float64) {
	c.n += sign * d.n
	c.length += sign * d.length
	c.inSum += sign * d.inSum
	c.maxSum += sign * d.maxSum
	c.maxN += sign * d.maxN
	c.structured += sign * d.structured
	c.jsonValid += sign * d.jsonValid
	c.refusal += sign * d.refusal
	c.tool += sign * d.tool
	c.emptyTool += sign * d.emptyTool
	c.tokN += sign * d.tokN
}

func (c *counts) scale(f float64) {
	c.n *= f
	c.length *= f
	c.inSum *= f
	c.maxSum *= f
	c.maxN *= f
	c.structured *= f
	c.jsonValid *= f
	c.refusal *= f
	c.tool *= f
	c.emptyTool *= f
	c.tokN *= f
}

const numBuckets = 6

type bucket struct {
	idx    int64 // bucket number (time / width); -1 empty
	c      counts
	tokens []int32 // output-token counts observed in this bucket (> 0 only)
}

type firing struct {
	on    bool
	last  time.Time // last signal
	value int32     // token_wall: the count the wall is at
}

type targetState struct {
	cur      int64 // newest bucket number
	buckets  [numBuckets]bucket
	win      counts
	hist     winHist // window: output tokens -> responses
	base     counts
	baseHist baseHist
	fire     [numDetectors]firing
	since    time.Time // when the oldest still-firing detector started; zero when none
}

// Detectors watch served responses for silent degradation, per target,
// comparing a sliding window with the target's own decayed baseline. Time is
// an argument: the gateway passes the wall clock, the simulator virtual time.
// Detectors is safe for concurrent use.
type Detectors struct {
	cfg   DetectorConfig
	width int64   // bucket width, ns
	decay float64 // baseline factor per bucket step
	// evidence is -ln(PValue).
	evidence float64
	mu       sync.Mutex
	ts       map[string]*targetState
	// list holds the first targets observed (up to maxListed), searched by
	// comparison before ts is hashed: a gateway has a few targets, and
	// last, the index of the one observed last, usually finds it at once.
	list []listed
	last int
}

type listed struct {
	key string
	st  *targetState
}

// maxListed bounds Detectors.list.
const maxListed = 16

// NewDetectors returns detectors with cfg (defaults filled in).
func NewDetectors(cfg DetectorConfig) *Detectors {
	cfg = cfg.withDefaults()
	width := int64(cfg.Window.D()) / numBuckets
	if width <= 0 {
		width = 1
	}
	return &Detectors{
		cfg:      cfg,
		width:    width,
		decay:    math.Pow(0.5, float64(width)/float64(cfg.BaselineHalfLife.D())),
		evidence: -math.Log(cfg.PValue),
		ts:       make(map[string]*targetState),
	}
}

// Config returns the configuration in effect, defaults filled in.
func (d *Detectors) Config() DetectorConfig { return d.cfg }

// Observe records one observation at now and returns the signals it raises:
// a detector signals when it starts firing and again every Repeat while it
// keeps firing. Most calls return nil.
func (d *Detectors) Observe(now time.Time, o Observation) []Signal {
	d.mu.Lock()
	st := d.target(o.Target)
	d.advance(st, now)
	b := &st.buckets[mod(st.cur)]
	b.c.add(&o)
	st.win.add(&o)
	if walled(&o) {
		v := int32(min(o.OutputTokens, math.MaxInt32))
		b.tokens = append(b.tokens, v)
		st.hist.inc(v)
	}
	sig := d.evaluate(st, now, &o)
	d.mu.Unlock()
	return sig
}

// target returns the state of a target, created on first use. Caller
// holds mu.
func (d *Detectors) target(key string) *targetState {
	if d.last < len(d.list) && d.list[d.last].key == key {
		return d.list[d.last].st
	}
	for i := range d.list {
		if d.list[i].key == key {
			d.last = i
			return d.list[i].st
		}
	}
	st := d.ts[key]
	if st == nil {
		st = &targetState{cur: -1}
		for i := range st.buckets {
			st.buckets[i].idx = -1
		}
		d.ts[key] = st
		if len(d.list) < maxListed {
			d.list = append(d.list, listed{key, st})
			d.last = len(d.list) - 1
		}
	}
	return st
}

// Firing returns the names of the detectors currently firing for target.
func (d *Detectors) Firing(target string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.ts[target]
	if st == nil {
		return nil
	}
	var out []string
	for i, f := range st.fire {
		if f.on {
			out = append(out, DetectorNames[i])
		}
	}
	return out
}

func mod(idx int64) int { return int(idx % numBuckets) }

// advance moves the window so that its newest bucket holds now, expiring
// buckets into the baseline. Time going backwards stays in the newest bucket.
func (d *Detectors) advance(st *targetState, now time.Time) {
	idx := now.UnixNano() / d.width
	if st.cur < 0 {
		st.cur = idx
		st.buckets[mod(idx)].idx = idx
		return
	}
	if idx <= st.cur {
		return
	}
	// The baseline freezes while a detector fires, unless it is not yet
	// established (a target bad from the start must still get a baseline) or
	// the firing has lasted Relearn.
	learn := st.since.IsZero() || now.Sub(st.since) >= d.cfg.Relearn.D() || st.base.n < float64(d.cfg.MinSamples)
	steps := idx - st.cur
	for i := int64(1); i <= min(steps, numBuckets); i++ {
		nb := st.cur + i
		b := &st.buckets[mod(nb)]
		if b.idx >= 0 {
			d.expire(st, b, learn)
		}
		b.idx = nb
	}
	if learn && steps > numBuckets {
		// Empty bucket steps still age the baseline.
		f := math.Pow(d.decay, float64(steps-numBuckets))
		st.base.scale(f)
		st.baseHist.scale(f)
	}
	st.cur = idx
}

func (d *Detectors) expire(st *targetState, b *bucket, learn bool) {
	st.win.plus(&b.c, -1)
	for _, v := range b.tokens {
		st.hist.dec(v)
	}
	if learn {
		st.base.scale(d.decay)
		st.base.plus(&b.c, 1)
		st.baseHist.decay(d.decay)
		for _, v := range b.tokens {
			st.baseHist.inc(v)
		}
	}
	b.c = counts{}
	b.tokens = b.tokens[:0]
}

// rising decides one rate detector: the window rate r over n samples against
// the baseline rate b. It fires when r-b reaches the threshold and the rise is
// significant: n·KL(r‖b) ≥ -ln(PValue), with b floored at 0.5%.
func (d *Detectors) rising(r, b, n, threshold float64) bool {
	if r-b < threshold {
		return false
	}
	return n*klBernoulli(r, math.Max(b, 0.005)) >= d.evidence
}

// klBernoulli is the Kullback-Leibler divergence of Bernoulli(q) from
// Bernoulli(p), in nats; p in (0, 1).
func klBernoulli(q, p float64) float64 {
	p = math.Min(p, 1-1e-9)
	kl := 0.0
	if q > 0 {
		kl += q * math.Log(q/p)
	}
	if q < 1 {
		kl += (1 - q) * math.Log((1-q)/(1-p))
	}
	return kl
}

// decide updates detector i's state and reports whether it signals now.
func (d *Detectors) decide(st *targetState, now time.Time, i int, on bool) bool {
	f := &st.fire[i]
	switch {
	case on && (!f.on || now.Sub(f.last) >= d.cfg.Repeat.D()):
		if !f.on && st.since.IsZero() {
			st.since = now
		}
		f.on, f.last = true, now
		return true
	case !on && f.on:
		f.on = false
	}
	return false
}

// hold keeps a firing detector on until its rise falls under half the
// threshold (hysteresis), so a borderline rate does not flap.
func hold(st *targetState, i int, r, b, threshold float64) bool {
	return st.fire[i].on && r-b >= threshold/2
}

// share runs detector i of a rate among the responses that can show it
// (n of them in the window): r is the window's rate, b the baseline's,
// th the threshold; format describes them in percent. evaluate calls it
// only when the detector is not quiet.
func (d *Detectors) share(out []Signal, st *targetState, now time.Time, target string, i int,
	th, n, r, b float64, format string) []Signal {
	on := d.rising(r, b, n, th) || hold(st, i, r, b, th)
	if (on || st.fire[i].on) && d.decide(st, now, i, on) { // else decide changes nothing
		out = append(out, signal(now, target, i, r, b, n, fmt.Sprintf(format, 100*r, 100*b)))
	}
	return out
}

// quietPath enables the quiet shortcut (tests compare with every detector
// decided in full).
var quietPath = true

// quiet reports whether detector i, off, stays off and signals nothing
// for a rise r-b under half its threshold th (> 0): it neither rises
// (r-b < th) nor is held (it is off), so share would change nothing.
func quiet(st *targetState, i int, r, b, th float64) bool {
	return r-b < th/2 && !st.fire[i].on
}

func signal(now time.Time, target string, i int, value, baseline, samples float64, detail string) Signal {
	return Signal{Time: now, Target: target, Detector: DetectorNames[i],
		Value: value, Baseline: baseline, Samples: int(samples), Detail: detail}
}

func (d *Detectors) evaluate(st *targetState, now time.Time, o *Observation) []Signal {
	cfg := &d.cfg
	minN := float64(cfg.MinSamples)
	w, base := &st.win, &st.base
	var out []Signal

	// finish_reason=length share, traffic mix unchanged.
	if !cfg.FinishLength.Disabled && w.n >= minN && base.n >= minN {
		r, b := w.length/w.n, base.length/base.n
		th := cfg.FinishLength.Threshold.F()
		if !quietPath || !quiet(st, 0, r, b, th) {
			on := (d.rising(r, b, w.n, th) || hold(st, 0, r, b, th)) && !d.mixChanged(w, base)
			if (on || st.fire[0].on) && d.decide(st, now, 0, on) {
				out = append(out, signal(now, o.Target, 0, r, b, w.n,
					fmt.Sprintf("finish_reason=length in %.0f%% of responses (baseline %.0f%%)", 100*r, 100*b)))
			}
		}
	}

	// Wall in the output-token histogram. It needs a baseline: short,
	// uniform answers (a classification, a small JSON object) naturally pile
	// up at one count, and only the target's own history tells them apart.
	if !cfg.TokenWall.Disabled && w.tokN >= minN && base.tokN >= minN {
		v := int32(0)
		if walled(o) {
			v = int32(min(o.OutputTokens, math.MaxInt32))
		}
		if f := &st.fire[1]; f.on {
			v = f.value
		}
		if v > 0 {
			r := float64(st.hist.get(v)) / w.tokN
			b := st.baseHist.get(v) / base.tokN
			th := cfg.TokenWall.Threshold.F()
			if !quietPath || !quiet(st, 1, r, b, th) {
				on := d.rising(r, b, w.tokN, th) || hold(st, 1, r, b, th)
				if on && !st.fire[1].on {
					st.fire[1].value = v
				}
				if (on || st.fire[1].on) && d.decide(st, now, 1, on) {
					detail := fmt.Sprintf("%.0f%% of responses end at exactly %d output tokens (baseline %.0f%%)", 100*r, v, 100*b)
					if bits.OnesCount32(uint32(v)) == 1 {
						detail += ", a power of two"
					}
					out = append(out, signal(now, o.Target, 1, r, b, w.tokN, detail))
				}
			}
		}
	}

	// The rates of the responses that can show them: JSON parse failures
	// on structured routes, refusal phrases, empty tool-call arguments. A
	// detector needs MinSamples such responses in the window; without as
	// many in the baseline, its baseline rate is 0.
	rates := [...]struct {
		i           int
		rule        *Rule
		n, baseN    float64
		r, baseRate float64
		format      string
	}{
		{2, &cfg.JSONInvalid, w.structured, base.structured, 1 - w.jsonValid/w.structured, 1 - base.jsonValid/base.structured,
			"%.0f%% of structured responses are not valid JSON (baseline %.0f%%)"},
		{3, &cfg.Refusal, w.n, base.n, w.refusal / w.n, base.refusal / base.n,
			"%.0f%% of responses are refusals (baseline %.0f%%)"},
		{4, &cfg.EmptyToolArgs, w.tool, base.tool, w.emptyTool / w.tool, base.emptyTool / base.tool,
			"%.0f%% of tool-calling responses have empty or invalid arguments (baseline %.0f%%)"},
	}
	for k := range rates {
		x := &rates[k]
		if x.rule.Disabled || x.n < minN {
			continue
		}
		b := 0.0
		if x.baseN >= minN {
			b = x.baseRate
		}
		th := x.rule.Threshold.F()
		if !quietPath || !quiet(st, x.i, x.r, b, th) {
			out = d.share(out, st, now, o.Target, x.i, th, x.n, x.r, b, x.format)
		}
	}

	if !st.since.IsZero() { // else nothing fires and nothing changes
		any := false
		for i := range st.fire { // by index: ranging over the array would copy it
			any = any || st.fire[i].on
		}
		if !any {
			st.since = time.Time{}
		}
	}
	return out
}

// mixChanged reports whether the window's traffic differs from the
// baseline's: mean input tokens or mean max_tokens moved by more than
// MixTolerance, or max_tokens went from unset to set (or back) for a large
// share of requests.
func (d *Detectors) mixChanged(w, b *counts) bool {
	tol := d.cfg.MixTolerance.F()
	moved := func(x, y float64) bool {
		if y == 0 {
			return x != 0
		}
		return math.Abs(x/y-1) > tol
	}
	if moved(w.inSum/w.n, b.inSum/b.n) {
		return true
	}
	if math.Abs(w.maxN/w.n-b.maxN/b.n) > tol {
		return true
	}
	if w.maxN > 0 && b.maxN > 0 && moved(w.maxSum/w.maxN, b.maxSum/b.maxN) {
		return true
	}
	return false
}
