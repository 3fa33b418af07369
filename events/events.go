package events

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"
	"time"
)

// Kind names an event type.
type Kind string

// Event kinds (DESIGN.md, "One event log, two engines").
const (
	RequestStart      Kind = "request.start"
	RequestEnd        Kind = "request.end"
	AttemptStart      Kind = "attempt.start"
	AttemptEnd        Kind = "attempt.end"
	BreakerTransition Kind = "breaker.transition"
	HealthChange      Kind = "health.change"
	ProbeResult       Kind = "probe.result"
	DetectorSignal    Kind = "detector.signal"
	AlertFired        Kind = "alert.fired"
	AlertResolved     Kind = "alert.resolved"
	AlertDelivered    Kind = "alert.delivered" // OK false: the delivery failed
	BudgetExhausted   Kind = "budget.exhausted"
	FaultStart        Kind = "fault.start"
	FaultEnd          Kind = "fault.end"
	TierServed        Kind = "tier.served"
	ConfigReload      Kind = "config.reload" // OK false: rejected, the old config keeps serving
	// ConfigWarning: a configuration was accepted with a warning (Route,
	// Target, Reason), e.g. an unqualified fallback.
	ConfigWarning Kind = "config.warning"
	// StateDegraded: a fleet's shared state store is unavailable (OK false,
	// Reason the error) and the replica follows local state, or it is back
	// and resynced (OK true).
	StateDegraded Kind = "state.degraded"
	// StreamContinuation: a fall-back completed, or failed to complete, an
	// answer part of which had already reached the client. From is the
	// target whose stream was cut, To and Target the fall-back; Outcome is
	// OutcomeContinued, OutcomeReplayed or OutcomeFailed; Reason says how
	// (a restart's skipped overlap, where a divergence began).
	StreamContinuation Kind = "stream.continuation"
	// PrefillVerdict: the continuation probe's verdict on a target that
	// declares prefill (Target): OK when it continued a known text cut
	// mid-word, false when it restarted or rejected it (Reason). A failed
	// target completes no partial answer from a prefill until it passes.
	PrefillVerdict Kind = "prefill.verdict"
	// StreamMalformed: an unparseable event of an upstream stream was
	// skipped (Target, Attempt); Value counts them in the attempt so far.
	StreamMalformed Kind = "stream.malformed"
)

// Request outcomes carried by RequestEnd.Outcome.
const (
	OutcomeServed   = "served"   // served in full by the first tier
	OutcomeDegraded = "degraded" // served by a lower tier (smaller model, stale cache)
	OutcomeFailed   = "failed"   // the user got an error
)

// How a partial answer was completed, carried by StreamContinuation.Outcome
// (with OutcomeFailed).
const (
	OutcomeContinued = "continued" // the fall-back continued it from a prefill (a restart's overlap skipped)
	OutcomeReplayed  = "replayed"  // the fall-back replayed the request and matched what was sent
)

// Event is one entry of the event log. It is a flat value: the fields that
// apply to a Kind are set, the rest are zero and omitted from JSON. Targets are
// always written "provider:model".
type Event struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`

	RequestID string `json:"request_id,omitempty"`
	Route     string `json:"route,omitempty"`
	Target    string `json:"target,omitempty"`
	Tier      string `json:"tier,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	Stream    bool   `json:"stream,omitempty"`
	// Client is the gateway client's ID (never its key) on request and
	// attempt events, when the gateway has client keys.
	Client string `json:"client,omitempty"`
	// Replica is the gateway replica (1..N) that emitted the event, in a
	// game day of a fleet of N > 1; 0 otherwise.
	Replica int `json:"replica,omitempty"`

	// Attempt and request results.
	Status       int           `json:"status,omitempty"`
	Class        string        `json:"class,omitempty"` // outcome class, e.g. "rate_limited", "ok"
	Outcome      string        `json:"outcome,omitempty"`
	TTFT         time.Duration `json:"ttft_ns,omitempty"`
	Duration     time.Duration `json:"duration_ns,omitempty"`
	InputTokens  int           `json:"input_tokens,omitempty"`
	OutputTokens int           `json:"output_tokens,omitempty"`
	CachedTokens int           `json:"cached_tokens,omitempty"`
	Cost         float64       `json:"cost,omitempty"`

	// Transitions (breaker, health): states and why.
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Reason string `json:"reason,omitempty"`

	// Named things: a fault step, an alert rule, a detector, a probe, a sink.
	Name     string  `json:"name,omitempty"`
	Severity string  `json:"severity,omitempty"`
	Sink     string  `json:"sink,omitempty"`
	OK       bool    `json:"ok,omitempty"`
	Value    float64 `json:"value,omitempty"`
}

// Sink receives events. Implementations must be safe for concurrent use and
// must not block for long: the gateway emits on its hot path.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }

// Discard drops every event.
var Discard Sink = SinkFunc(func(Event) {})

// Log records events in memory in the order they were emitted and numbers them.
// The zero value is ready to use.
type Log struct {
	mu     sync.Mutex
	events []Event
}

// Emit appends e, setting its Seq.
func (l *Log) Emit(e Event) {
	l.mu.Lock()
	e.Seq = uint64(len(l.events)) + 1
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// Events returns a copy of the recorded events.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Len returns the number of recorded events.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// Tee returns a Sink that emits to every sink in order.
func Tee(sinks ...Sink) Sink {
	return SinkFunc(func(e Event) {
		for _, s := range sinks {
			s.Emit(e)
		}
	})
}

// Bus fans events out to subscribers. A slow subscriber loses events rather
// than slowing the emitter; Dropped counts them. The zero value is ready to use.
type Bus struct {
	mu      sync.Mutex
	seq     uint64
	subs    map[chan Event]struct{}
	dropped uint64
}

// Emit numbers e and delivers it to every subscriber without blocking.
func (b *Bus) Emit(e Event) {
	b.mu.Lock()
	b.seq++
	e.Seq = b.seq
	for ch := range b.subs {
		select {
		case ch <- e:
		default:
			b.dropped++
		}
	}
	b.mu.Unlock()
}

// Subscribe returns a channel of future events with the given buffer and a
// function that cancels the subscription and closes the channel.
func (b *Bus) Subscribe(buffer int) (<-chan Event, func()) {
	ch := make(chan Event, buffer)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[chan Event]struct{})
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, ch)
			b.mu.Unlock()
			close(ch)
		})
	}
}

// Dropped returns how many events slow subscribers lost.
func (b *Bus) Dropped() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

// WriteJSONL writes events one JSON object per line. The output is a pure
// function of the events, so equal logs give byte-identical files.
func WriteJSONL(w io.Writer, evs []Event) error { return writeJSONL(w, slices.All(evs)) }

// WriteJSONL writes the log as WriteJSONL writes a slice of its events.
func (p *Packed) WriteJSONL(w io.Writer) error { return writeJSONL(w, p.All()) }

func writeJSONL(w io.Writer, evs iter.Seq2[int, Event]) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	var ev Event // one escaping copy, not one per event
	var enc jsonEncoder
	for _, e := range evs {
		ev = e
		var err error
		if line, err = enc.append(line[:0], &ev); err != nil {
			return err
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadJSONL reads events written by WriteJSONL. An unparsable line is an error
// naming its line number.
func ReadJSONL(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	var out []Event
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("events: line %d: %w", line, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
