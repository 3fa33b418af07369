package policy

import (
	"bufio"
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/yamlfile"
	"github.com/google/go-cmp/cmp"
)

// TestTranscripts runs the incident transcripts in testdata/*.txt (in the
// style of etcd raft's datadriven interaction tests). Each block is a
// command line, optional input lines, "----", and the expected output up to
// a blank line. Run with -update to rewrite the expected output.
//
// Commands:
//
//	config [seed=N]           + YAML input (routes/policy): a new engine at t=0
//	fault target=K kind=KIND [from=D] [until=D] [period=D down=D] [rate=P%] [latency=D] [ttft=D]
//	                          KIND: 429 500 502 503 529 timeout stall reset auth slow ok
//	traffic route=R rate=N/s for=D [every=D] [stream] [cache=hit]
//	request route=R [stream] [tokens=N] [hint=K] [nonretryable] [cache=hit]
//	advance D                 advance the clock, running Tick when due
//	signal target=K action=demote|open [reason=S]
//	probe target=K ok=true|false
//	state                     breakers, health and budgets
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			runTranscript(t, f)
		})
	}
}

type block struct {
	cmd   string
	input []string
	want  []string
}

func parseTranscript(t *testing.T, path string) (blocks []block, raw []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	i := 0
	for i < len(lines) {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			raw = append(raw, l)
			i++
			continue
		}
		b := block{cmd: l}
		i++
		for i < len(lines) && lines[i] != "----" {
			b.input = append(b.input, lines[i])
			i++
		}
		if i == len(lines) {
			t.Fatalf("%s: command %q has no ----", path, b.cmd)
		}
		i++
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			b.want = append(b.want, lines[i])
			i++
		}
		raw = append(raw, "\x00"+strconv.Itoa(len(blocks)))
		blocks = append(blocks, b)
	}
	return blocks, raw
}

func runTranscript(t *testing.T, path string) {
	blocks, raw := parseTranscript(t, path)
	in := &interp{t: t}
	var got [][]string
	for _, b := range blocks {
		out := in.run(b)
		if len(out) == 0 {
			out = []string{"(no events)"}
		}
		got = append(got, out)
		if !golden.Update() {
			if d := cmp.Diff(b.want, out); d != "" {
				t.Errorf("%s: %s (-want +got):\n%s", path, b.cmd, d)
			}
		}
	}
	if golden.Update() {
		var sb strings.Builder
		for _, l := range raw {
			if strings.HasPrefix(l, "\x00") {
				n, _ := strconv.Atoi(l[1:])
				b := blocks[n]
				sb.WriteString(b.cmd + "\n")
				for _, in := range b.input {
					sb.WriteString(in + "\n")
				}
				sb.WriteString("----\n")
				for _, o := range got[n] {
					sb.WriteString(o + "\n")
				}
				continue
			}
			sb.WriteString(l + "\n")
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// interp is the transcript interpreter: an engine, a virtual clock, faults
// on targets and an event queue for concurrent requests.
type interp struct {
	t      *testing.T
	e      *Engine
	log    *events.Log
	now    time.Time
	rnd    *rand.Rand
	faults []tfault
	q      evq
	seq    int
	reqN   int
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type tfault struct {
	target       string
	kind         string
	from, until  time.Duration // until 0: forever
	period, down time.Duration
	rate         float64
	latency      time.Duration
	ttft         time.Duration
}

func (in *interp) rel(x time.Time) string { return x.Sub(epoch).Round(time.Millisecond).String() }

func (in *interp) fail(format string, args ...any) []string {
	in.t.Helper()
	in.t.Fatalf(format, args...)
	return nil
}

func parseArgs(fields []string) map[string]string {
	m := map[string]string{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			v = "true"
		}
		m[k] = v
	}
	return m
}

func (in *interp) dur(s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		in.t.Fatalf("bad duration %q", s)
	}
	return d
}

func (in *interp) run(b block) []string {
	fields := strings.Fields(b.cmd)
	args := parseArgs(fields[1:])
	start := 0
	if in.log != nil {
		start = in.log.Len()
	}
	switch fields[0] {
	case "config":
		var cfg Config
		if _, err := yamlfile.Decode("config", []byte(strings.Join(b.input, "\n")), &cfg); err != nil {
			return strings.Split(err.Error(), "\n")
		}
		seed, _ := strconv.ParseUint(args["seed"], 10, 64)
		in.log = &events.Log{}
		e, err := New(cfg, Options{Rand: rand.New(rand.NewPCG(seed, 1)), Events: in.log})
		if err != nil {
			return strings.Split(err.Error(), "\n")
		}
		in.e, in.now, in.faults = e, epoch, nil
		in.rnd = rand.New(rand.NewPCG(seed, 2))
		return []string{"ok"}
	case "fault":
		f := tfault{target: args["target"], kind: args["kind"], from: in.dur(args["from"]), until: in.dur(args["until"]),
			period: in.dur(args["period"]), down: in.dur(args["down"]), latency: in.dur(args["latency"]), ttft: in.dur(args["ttft"]), rate: 1}
		if r, ok := args["rate"]; ok {
			p, err := yamlfile.ParsePercent(r)
			if err != nil {
				return in.fail("%v", err)
			}
			f.rate = p.F()
		}
		in.faults = append(in.faults, f)
		return []string{fmt.Sprintf("fault %d: %s %s", len(in.faults), f.target, f.kind)}
	case "advance":
		in.advanceTo(in.now.Add(in.dur(fields[1])))
		return in.eventLines(start, nil)
	case "signal":
		if err := in.e.Signal(in.now, args["target"], args["reason"], Action(args["action"])); err != nil {
			return []string{err.Error()}
		}
		return in.eventLines(start, nil)
	case "probe":
		if err := in.e.ProbeResult(in.now, args["target"], args["ok"] == "true"); err != nil {
			return []string{err.Error()}
		}
		return in.eventLines(start, nil)
	case "state":
		return in.state()
	case "request":
		return in.request(args, start)
	case "traffic":
		return in.traffic(args, start)
	}
	return in.fail("unknown command %q", fields[0])
}

// outcome returns what target returns at now, and after how long.
func (in *interp) outcome(d Decision) (Outcome, time.Duration) {
	key := d.Target.Key()
	el := in.now.Sub(epoch)
	for i := len(in.faults) - 1; i >= 0; i-- {
		f := in.faults[i]
		if f.target != key || el < f.from || (f.until > 0 && el >= f.until) {
			continue
		}
		if f.period > 0 && (el-f.from)%f.period >= f.down {
			continue
		}
		if f.rate < 1 && in.rnd.Float64() >= f.rate {
			continue
		}
		lat := f.latency
		pick := func(def time.Duration) time.Duration {
			if lat == 0 {
				return def
			}
			return lat
		}
		switch f.kind {
		case "429":
			return Outcome{Class: RateLimited, Status: 429, BytesSent: true}, pick(50 * time.Millisecond)
		case "500", "502", "503", "529":
			st, _ := strconv.Atoi(f.kind)
			return Outcome{Class: Classify(st, ""), Status: st, BytesSent: true}, pick(100 * time.Millisecond)
		case "auth":
			return Outcome{Class: Auth, Status: 401, BytesSent: true}, pick(50 * time.Millisecond)
		case "reset":
			return Outcome{Class: Reset}, pick(10 * time.Millisecond)
		case "timeout":
			return Outcome{Class: TimeoutTTFT, BytesSent: true}, d.Deadlines.FirstToken.Sub(in.now)
		case "stall":
			return Outcome{Class: Stall, BytesSent: true, Partial: true, TTFT: 300 * time.Millisecond, OutputTokens: 20}, 300*time.Millisecond + d.Timeouts.Idle.D()
		case "slow":
			ttft := f.ttft
			return Outcome{Class: OK, Status: 200, TTFT: ttft, OutputTokens: 100, BytesSent: true}, ttft + pick(time.Second)
		case "ok":
			return Outcome{Class: OK, Status: 200, TTFT: 200 * time.Millisecond, OutputTokens: 100, BytesSent: true}, pick(time.Second)
		default:
			in.t.Fatalf("unknown fault kind %q", f.kind)
		}
	}
	return Outcome{Class: OK, Status: 200, TTFT: 200 * time.Millisecond, OutputTokens: 100, BytesSent: true}, time.Second
}

// The event queue.
type qitem struct {
	at  time.Time
	seq int
	fn  func()
}
type evq []qitem

func (q evq) Len() int { return len(q) }
func (q evq) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q evq) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *evq) Push(x any)   { *q = append(*q, x.(qitem)) }
func (q *evq) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

func maxTime(x, y time.Time) time.Time {
	if y.After(x) {
		return y
	}
	return x
}

func (in *interp) at(t time.Time, fn func()) {
	in.seq++
	heap.Push(&in.q, qitem{at: t, seq: in.seq, fn: fn})
}

// advanceTo runs queued work and due ticks up to end.
func (in *interp) advanceTo(end time.Time) {
	for {
		next := end
		hasItem := in.q.Len() > 0 && !in.q[0].at.After(end)
		if hasItem {
			next = in.q[0].at
		}
		if nt := in.e.NextTick(); !nt.IsZero() && !nt.After(next) {
			in.now = maxTime(in.now, nt)
			in.e.Tick(in.now) // clears everything due at now
			continue
		}
		if !hasItem {
			break
		}
		it := heap.Pop(&in.q).(qitem)
		if it.at.After(in.now) {
			in.now = it.at
		}
		it.fn()
	}
	if end.After(in.now) {
		in.now = end
	}
	in.e.Tick(in.now)
}

// drive steps one request through its decisions on the event queue.
func (in *interp) drive(a *Attempt, cacheHit bool, trace func(Decision)) {
	d := a.Next(in.now)
	if trace != nil {
		trace(d)
	}
	switch d.Kind {
	case Send:
		o, lat := in.outcome(d)
		in.at(in.now.Add(lat), func() {
			a.Observe(in.now, o)
			in.drive(a, cacheHit, trace)
		})
	case Wait:
		in.at(d.Until, func() { in.drive(a, cacheHit, trace) })
	case ServeCached:
		if cacheHit {
			a.Observe(in.now, Outcome{Class: OK})
		} else {
			a.Observe(in.now, Outcome{Class: CacheMiss})
		}
		in.drive(a, cacheHit, trace)
	}
}

func (in *interp) newRequest(args map[string]string) Request {
	in.reqN++
	tokens, _ := strconv.Atoi(args["tokens"])
	return Request{ID: "r" + strconv.Itoa(in.reqN), Route: args["route"], Stream: args["stream"] == "true",
		PromptTokens: tokens, Hint: args["hint"], NonRetryable: args["nonretryable"] == "true",
		Tools: args["tools"] == "true", Structured: args["structured"] == "true"}
}

func (in *interp) request(args map[string]string, start int) []string {
	var out []string
	pos := start
	flush := func() {
		out = append(out, in.eventLines(pos, func(k events.Kind) bool { return k != events.RequestStart })...)
		pos = in.log.Len()
	}
	a := in.e.Begin(in.now, in.newRequest(args))
	in.drive(a, args["cache"] == "hit", func(d Decision) {
		flush()
		s := fmt.Sprintf("%s decision %s", in.rel(in.now), d.Kind)
		switch d.Kind {
		case Send:
			s += fmt.Sprintf(" %s try=%d tier=%s", d.Target.Key(), d.Try, d.Tier)
			if d.Prefill {
				s += " prefill"
			}
			if d.Replay {
				s += " replay"
			}
		case Wait:
			s += fmt.Sprintf(" until=%s %s", in.rel(d.Until), d.Target.Key())
		case Fail:
			s += fmt.Sprintf(" status=%d type=%s retry_after=%s", d.Err.Status, d.Err.Type, d.Err.RetryAfter)
		case Done:
			s += " tier=" + d.Tier
		}
		out = append(out, s)
	})
	for in.q.Len() > 0 {
		in.advanceTo(in.q[0].at)
	}
	flush()
	return out
}

// eventLines formats the events emitted since start.
func (in *interp) eventLines(start int, keep func(events.Kind) bool) []string {
	out := []string{}
	for _, ev := range in.log.Events()[start:] {
		if keep != nil && !keep(ev.Kind) {
			continue
		}
		out = append(out, in.formatEvent(ev))
	}
	return out
}

func (in *interp) formatEvent(ev events.Event) string {
	s := fmt.Sprintf("%s %s", in.rel(ev.Time), ev.Kind)
	add := func(k, v string) {
		if v != "" {
			s += " " + k + "=" + v
		}
	}
	add("req", ev.RequestID)
	add("target", ev.Target)
	if ev.Attempt > 0 && ev.Kind != events.RequestEnd {
		add("try", strconv.Itoa(ev.Attempt))
	}
	if ev.From != "" {
		s += " " + ev.From + "->" + ev.To
	}
	add("reason", ev.Reason)
	if ev.Status > 0 {
		add("status", strconv.Itoa(ev.Status))
	}
	add("class", ev.Class)
	add("outcome", ev.Outcome)
	if ev.Kind == events.RequestEnd || ev.Kind == events.TierServed {
		add("tier", ev.Tier)
	}
	return s
}

func (in *interp) traffic(args map[string]string, start int) []string {
	rateS := strings.TrimSuffix(args["rate"], "/s")
	rate, err := strconv.ParseFloat(rateS, 64)
	if err != nil || rate <= 0 {
		return in.fail("bad rate %q", args["rate"])
	}
	span := in.dur(args["for"])
	every := in.dur(args["every"])
	if every == 0 {
		every = span
	}
	begin := in.now
	end := begin.Add(span)
	gap := time.Duration(float64(time.Second) / rate)
	cacheHit := args["cache"] == "hit"
	for at := begin; at.Before(end); at = at.Add(gap) {
		in.at(at, func() {
			a := in.e.Begin(in.now, in.newRequest(args))
			in.drive(a, cacheHit, nil)
		})
	}
	in.advanceTo(end)
	for in.q.Len() > 0 { // requests still in flight finish
		in.advanceTo(in.q[0].at)
	}
	// Summarize per bucket of `every`, by request arrival and attempt start.
	type bucket struct {
		req, served, degraded, failed, exhausted int
		attempts                                 map[string]int
		lines                                    []string
	}
	nb := int((span + every - 1) / every)
	bs := make([]bucket, nb)
	for i := range bs {
		bs[i].attempts = map[string]int{}
	}
	idx := func(x time.Time) int {
		i := int(x.Sub(begin) / every)
		return max(0, min(i, nb-1))
	}
	startOf := map[string]time.Time{}
	for _, ev := range in.log.Events()[start:] {
		switch ev.Kind {
		case events.RequestStart:
			startOf[ev.RequestID] = ev.Time
			bs[idx(ev.Time)].req++
		case events.RequestEnd:
			b := &bs[idx(startOf[ev.RequestID])]
			switch ev.Outcome {
			case events.OutcomeServed:
				b.served++
			case events.OutcomeDegraded:
				b.degraded++
			default:
				b.failed++
			}
		case events.AttemptStart:
			bs[idx(ev.Time)].attempts[ev.Target]++
		case events.BudgetExhausted:
			bs[idx(ev.Time)].exhausted++
		case events.BreakerTransition, events.HealthChange:
			b := &bs[idx(ev.Time)]
			b.lines = append(b.lines, "  "+in.formatEvent(ev))
		}
	}
	var keys []string
	for _, tg := range in.e.Targets(args["route"]) {
		keys = append(keys, tg.Key())
	}
	var out []string
	for i, b := range bs {
		from := begin.Add(time.Duration(i) * every)
		s := fmt.Sprintf("%s..%s requests=%d served=%d degraded=%d failed=%d |", in.rel(from), in.rel(from.Add(every)), b.req, b.served, b.degraded, b.failed)
		for _, k := range keys {
			s += fmt.Sprintf(" %s=%d", k, b.attempts[k])
		}
		if b.exhausted > 0 {
			s += fmt.Sprintf(" budget_exhausted=%d", b.exhausted)
		}
		out = append(out, s)
		out = append(out, b.lines...)
	}
	return out
}

func (in *interp) state() []string {
	st := in.e.State()
	var out []string
	for _, ts := range st.Targets {
		s := fmt.Sprintf("%s breaker=%s gen=%d openings=%d open_for=%s samples=%d failures=%d health=%s", ts.Key, ts.Breaker, ts.Generation, ts.Openings, ts.OpenFor, ts.Samples, ts.Failures, ts.Health)
		if !ts.OpenUntil.IsZero() {
			s += " open_until=" + in.rel(ts.OpenUntil)
		}
		if ts.Reason != "" {
			s += " reason=" + ts.Reason
		}
		if !ts.UnhealthyUntil.IsZero() {
			s += " unhealthy_until=" + in.rel(ts.UnhealthyUntil)
		}
		out = append(out, s)
	}
	names := slices.Clone(in.e.Routes())
	for i, rs := range st.Routes {
		out = append(out, fmt.Sprintf("route %s requests=%d retries=%d allowed=%d", names[i], rs.Requests, rs.Retries, rs.Allowed))
	}
	return out
}
