package events

import (
	"encoding/binary"
	"iter"
	"math"
	"time"
)

// Packed is an append-only event log stored compactly: each event is a few
// varint-encoded bytes (only the fields that are set, times as deltas, every
// string interned), about 20 bytes for a typical request event instead of
// the 328 of an Event value, and the storage holds no pointers for the
// garbage collector to scan. The simulator records millions of events per
// game day in one; a plain []Event of that size costs more in fresh memory
// than the simulation itself.
//
// Events come back equal to those appended, with one exception: times are
// returned in the location of the first event's time (a log whose events
// share one location, as every log written by one process does, is
// unaffected). Strings come back as the interned copy of the first equal
// string appended. The zero value is ready to use; a Packed is not safe
// for concurrent use.
type Packed struct {
	blocks [][]byte
	n      int
	base   time.Time // the first event's time; deltas start from it
	last   int64     // previous event's time, ns since base
	strs   []string
	ids    map[string]uint32
	// cache holds the last string seen in each string field and its id:
	// most events repeat their route, target, class and kind.
	cache [numStrFields]struct {
		s  string
		id uint32
		ok bool
	}
}

// packedBlock is the size of a storage block; an event never spans two.
const (
	packedBlock  = 256 << 10
	maxPackedLen = 4 + 5 + 10 + 24*10 // mask, kind, time, every field as a 10-byte varint
)

// Field bits of the presence mask, in encoding order.
const (
	fSeq = 1 << iota // set when Seq is not the event's position + 1
	fRequestID
	fRoute
	fTarget
	fTier
	fAttempt
	fStream
	fStatus
	fClass
	fOutcome
	fTTFT
	fDuration
	fInputTokens
	fOutputTokens
	fCachedTokens
	fCost
	fFrom
	fTo
	fReason
	fName
	fSeverity
	fSink
	fOK
	fValue
)

// String fields with an interning cache slot each.
const (
	sKind = iota
	sRequestID
	sRoute
	sTarget
	sTier
	sClass
	sOutcome
	sFrom
	sTo
	sReason
	sName
	sSeverity
	sSink
	numStrFields
)

// Len returns the number of events appended.
func (p *Packed) Len() int { return p.n }

// Append adds an event to the log.
func (p *Packed) Append(e Event) {
	if p.n == 0 {
		p.base = e.Time
	}
	var mask uint64
	if e.Seq != uint64(p.n)+1 {
		mask |= fSeq
	}
	mask |= bit(e.RequestID != "", fRequestID) | bit(e.Route != "", fRoute) | bit(e.Target != "", fTarget) |
		bit(e.Tier != "", fTier) | bit(e.Attempt != 0, fAttempt) | bit(e.Stream, fStream) |
		bit(e.Status != 0, fStatus) | bit(e.Class != "", fClass) | bit(e.Outcome != "", fOutcome) |
		bit(e.TTFT != 0, fTTFT) | bit(e.Duration != 0, fDuration) | bit(e.InputTokens != 0, fInputTokens) |
		bit(e.OutputTokens != 0, fOutputTokens) | bit(e.CachedTokens != 0, fCachedTokens) |
		bit(e.Cost != 0, fCost) | bit(e.From != "", fFrom) | bit(e.To != "", fTo) | bit(e.Reason != "", fReason) |
		bit(e.Name != "", fName) | bit(e.Severity != "", fSeverity) | bit(e.Sink != "", fSink) |
		bit(e.OK, fOK) | bit(e.Value != 0, fValue)

	b := p.room()
	b = binary.AppendUvarint(b, mask)
	b = binary.AppendUvarint(b, uint64(p.intern(sKind, string(e.Kind))))
	at := int64(e.Time.Sub(p.base))
	b = binary.AppendVarint(b, at-p.last)
	p.last = at
	if mask&fSeq != 0 {
		b = binary.AppendUvarint(b, e.Seq)
	}
	if mask&fRequestID != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sRequestID, e.RequestID)))
	}
	if mask&fRoute != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sRoute, e.Route)))
	}
	if mask&fTarget != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sTarget, e.Target)))
	}
	if mask&fTier != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sTier, e.Tier)))
	}
	if mask&fAttempt != 0 {
		b = binary.AppendVarint(b, int64(e.Attempt))
	}
	if mask&fStatus != 0 {
		b = binary.AppendVarint(b, int64(e.Status))
	}
	if mask&fClass != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sClass, e.Class)))
	}
	if mask&fOutcome != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sOutcome, e.Outcome)))
	}
	if mask&fTTFT != 0 {
		b = binary.AppendVarint(b, int64(e.TTFT))
	}
	if mask&fDuration != 0 {
		b = binary.AppendVarint(b, int64(e.Duration))
	}
	if mask&fInputTokens != 0 {
		b = binary.AppendVarint(b, int64(e.InputTokens))
	}
	if mask&fOutputTokens != 0 {
		b = binary.AppendVarint(b, int64(e.OutputTokens))
	}
	if mask&fCachedTokens != 0 {
		b = binary.AppendVarint(b, int64(e.CachedTokens))
	}
	if mask&fCost != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Cost))
	}
	if mask&(fFrom|fTo|fReason|fName|fSeverity|fSink|fValue) != 0 {
		b = p.appendRare(b, mask, &e)
	}
	p.blocks[len(p.blocks)-1] = b
	p.n++
}

// appendRare encodes the fields request events do not use.
func (p *Packed) appendRare(b []byte, mask uint64, e *Event) []byte {
	if mask&fFrom != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sFrom, e.From)))
	}
	if mask&fTo != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sTo, e.To)))
	}
	if mask&fReason != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sReason, e.Reason)))
	}
	if mask&fName != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sName, e.Name)))
	}
	if mask&fSeverity != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sSeverity, e.Severity)))
	}
	if mask&fSink != 0 {
		b = binary.AppendUvarint(b, uint64(p.intern(sSink, e.Sink)))
	}
	if mask&fValue != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Value))
	}
	return b
}

func bit(ok bool, b uint64) uint64 {
	if ok {
		return b
	}
	return 0
}

// room returns the current block with space for one more event.
func (p *Packed) room() []byte {
	if k := len(p.blocks); k > 0 {
		if b := p.blocks[k-1]; cap(b)-len(b) >= maxPackedLen {
			return b
		}
	}
	b := make([]byte, 0, packedBlock)
	p.blocks = append(p.blocks, b)
	return b
}

func (p *Packed) intern(slot int, s string) uint32 {
	c := &p.cache[slot]
	if c.ok && c.s == s {
		return c.id
	}
	id, ok := p.ids[s]
	if !ok {
		if p.ids == nil {
			p.ids = make(map[string]uint32, 256)
		}
		id = uint32(len(p.strs))
		p.strs = append(p.strs, s)
		p.ids[s] = id
	}
	c.s, c.id, c.ok = s, id, true
	return id
}

// All returns the events in the order they were appended, with their
// positions.
func (p *Packed) All() iter.Seq2[int, Event] {
	return func(yield func(int, Event) bool) {
		var at int64
		i := 0
		for _, blk := range p.blocks {
			for len(blk) > 0 {
				var e Event
				blk, at = p.decode(blk, at, i, &e)
				if !yield(i, e) {
					return
				}
				i++
			}
		}
	}
}

// Events returns the log as a slice.
func (p *Packed) Events() []Event {
	out := make([]Event, 0, p.n)
	for _, e := range p.All() {
		out = append(out, e)
	}
	return out
}

// decode reads the event at position i from b, whose previous event was at
// ns after base; it returns the rest of b and this event's offset.
func (p *Packed) decode(b []byte, prev int64, i int, e *Event) ([]byte, int64) {
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		b = b[n:]
		return v
	}
	sv := func() int64 {
		v, n := binary.Varint(b)
		b = b[n:]
		return v
	}
	mask := uv()
	e.Kind = Kind(p.strs[uv()])
	at := prev + sv()
	e.Time = p.base.Add(time.Duration(at))
	e.Seq = uint64(i) + 1
	if mask&fSeq != 0 {
		e.Seq = uv()
	}
	str := func(bit uint64, dst *string) {
		if mask&bit != 0 {
			*dst = p.strs[uv()]
		}
	}
	num := func(bit uint64) int64 {
		if mask&bit != 0 {
			return sv()
		}
		return 0
	}
	float := func(bit uint64) float64 {
		if mask&bit == 0 {
			return 0
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
		return v
	}
	str(fRequestID, &e.RequestID)
	str(fRoute, &e.Route)
	str(fTarget, &e.Target)
	str(fTier, &e.Tier)
	e.Attempt = int(num(fAttempt))
	e.Stream = mask&fStream != 0
	e.Status = int(num(fStatus))
	str(fClass, &e.Class)
	str(fOutcome, &e.Outcome)
	e.TTFT = time.Duration(num(fTTFT))
	e.Duration = time.Duration(num(fDuration))
	e.InputTokens = int(num(fInputTokens))
	e.OutputTokens = int(num(fOutputTokens))
	e.CachedTokens = int(num(fCachedTokens))
	e.Cost = float(fCost)
	str(fFrom, &e.From)
	str(fTo, &e.To)
	str(fReason, &e.Reason)
	str(fName, &e.Name)
	str(fSeverity, &e.Severity)
	str(fSink, &e.Sink)
	e.OK = mask&fOK != 0
	e.Value = float(fValue)
	return b, at
}
