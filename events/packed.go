package events

import (
	"encoding/binary"
	"iter"
	"math"
	"time"
)

// Packed is an append-only event log stored compactly: each event is a few
// varint-encoded bytes (only the fields that are set, times as deltas,
// strings as numbers into a table, request ids written out once per run of
// events of the same request), 20 to 40 bytes for a request's events
// instead of the 328 of an Event value, in blocks the garbage collector
// need not scan. The simulator records millions of events per game day in
// one; a plain []Event of that size costs more in fresh memory than the
// simulation itself.
//
// Events come back equal to those appended, with one exception: times are
// returned in the location of the first event's time (a log whose events
// share one location, as every log written by one process does, is
// unaffected). A string comes back equal, as a copy the log kept (the same
// string appended again may be kept again). The zero value is ready to use;
// a Packed is not safe for concurrent use.
type Packed struct {
	blocks [][]byte // full blocks
	// cur is the block being written, its first curLen bytes written: an
	// event writes no pointer (the slice header stays as it is).
	cur    []byte
	curLen int
	n      int
	base   time.Time // the first event's time; deltas start from it
	last   int64     // previous event's time, ns since base
	// lastID is the request id last written: an event of the same
	// request writes a zero length instead.
	lastID string
	// lastTime is the previous event's time: events often share an
	// instant, and then its offset is last.
	lastTime time.Time
	// strs holds the strings by id, in chunks of strChunk: a table of
	// millions is never copied to grow.
	strs  [][]string
	nstrs int
	// kinds caches the ids of event kinds, direct-mapped by length and
	// first byte: every event has one, and a few kinds alternate.
	kinds [kindSlots]internSlot
	// cache maps recently appended strings to their ids, direct-mapped by a
	// hash of their ends. A string missing from it is added to strs again:
	// the log stays correct (equal strings, different ids), and the few
	// strings most events repeat (kinds, routes, targets, classes) stay
	// cached.
	cache [internSlots]internSlot
	// recent holds the last few strings of each frequent field and their
	// ids: an event's route, target, tier or class is most often one its
	// predecessors had, and comparing a few strings (the same constants,
	// mostly) is cheaper than hashing one.
	recent [numRecent]recentStrs
}

// recentStrs is a field's recent strings.
type recentStrs struct {
	s    [4]string
	id   [4]uint32
	hit  uint8 // the slot found last
	next uint8 // the slot to replace next
}

type internSlot struct {
	s  string
	id uint32
	ok bool
}

const (
	internSlots = 4096
	kindSlots   = 64
	strChunk    = 4096
)

// Fields with recent strings of their own (Packed.recent).
const (
	lRoute = iota
	lTarget
	lTier
	lClass
	lOutcome
	numRecent
)

// packedBlock is the size of a storage block; an event never spans two.
const (
	packedBlock  = 256 << 10
	maxPackedLen = 4 + 5 + 10 + 26*10 // mask, kind, time, every field as a 10-byte varint
	// maxIDLen is the longest request id written out in a log block; a
	// longer one is numbered in the string table.
	maxIDLen = 1 << 10
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
	fClient
	fReplica
)

// Len returns the number of events appended.
func (p *Packed) Len() int { return p.n }

// Append adds a copy of *e to the log.
func (p *Packed) Append(e *Event) {
	if p.n == 0 {
		p.base, p.lastTime = e.Time, e.Time
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
		bit(e.OK, fOK) | bit(e.Value != 0, fValue) | bit(e.Client != "", fClient) |
		bit(e.Replica != 0, fReplica)

	b := p.room()
	b = binary.AppendUvarint(b, mask)
	b = binary.AppendUvarint(b, uint64(p.internKind(string(e.Kind))))
	at := p.last
	if e.Time != p.lastTime {
		at = int64(e.Time.Sub(p.base))
		p.lastTime = e.Time
	}
	b = binary.AppendVarint(b, at-p.last)
	p.last = at
	if mask&fSeq != 0 {
		b = binary.AppendUvarint(b, e.Seq)
	}
	if mask&fRequestID != 0 {
		// Request ids are written out, not numbered: nearly every one is
		// new, and a table of them would hold millions of strings.
		// A zero is the previous one again; an odd number n is an id of
		// n>>1 bytes that follow; an even one is (n>>1)-1 in the string
		// table, for ids longer than maxIDLen.
		switch id := e.RequestID; {
		case id == p.lastID:
			b = append(b, 0)
		case len(id) <= maxIDLen:
			b = binary.AppendUvarint(b, uint64(len(id))<<1|1)
			b = append(b, id...)
		default:
			b = binary.AppendUvarint(b, (uint64(p.intern(id))+1)<<1)
		}
		p.lastID = e.RequestID
	}
	if mask&fRoute != 0 {
		b = binary.AppendUvarint(b, uint64(p.internRecent(lRoute, e.Route)))
	}
	if mask&fTarget != 0 {
		b = binary.AppendUvarint(b, uint64(p.internRecent(lTarget, e.Target)))
	}
	if mask&fTier != 0 {
		b = binary.AppendUvarint(b, uint64(p.internRecent(lTier, e.Tier)))
	}
	if mask&fAttempt != 0 {
		b = binary.AppendVarint(b, int64(e.Attempt))
	}
	if mask&fStatus != 0 {
		b = binary.AppendVarint(b, int64(e.Status))
	}
	if mask&fClass != 0 {
		b = binary.AppendUvarint(b, uint64(p.internRecent(lClass, e.Class)))
	}
	if mask&fOutcome != 0 {
		b = binary.AppendUvarint(b, uint64(p.internRecent(lOutcome, e.Outcome)))
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
	if mask&fReplica != 0 {
		b = binary.AppendVarint(b, int64(e.Replica))
	}
	if mask&(fFrom|fTo|fReason|fName|fSeverity|fSink|fValue|fClient) != 0 {
		b = p.appendRare(b, mask, e)
	}
	p.curLen = len(b)
	p.n++
}

// appendRare encodes the fields request events do not use.
func (p *Packed) appendRare(b []byte, mask uint64, e *Event) []byte {
	for _, bit := range rareBits {
		if mask&bit != 0 {
			b = binary.AppendUvarint(b, uint64(p.intern(*rareString(e, bit))))
		}
	}
	if mask&fValue != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Value))
	}
	return b
}

// rareBits are the string fields of appendRare and decodeRare, in encoding
// order; rareString returns the field of a bit.
var rareBits = [...]uint64{fFrom, fTo, fReason, fName, fSeverity, fSink, fClient}

// rareString is a plain switch, not a table of functions: through a
// function value the event would escape to the heap on every call.
func rareString(e *Event, bit uint64) *string {
	switch bit {
	case fFrom:
		return &e.From
	case fTo:
		return &e.To
	case fReason:
		return &e.Reason
	case fName:
		return &e.Name
	case fSeverity:
		return &e.Severity
	case fClient:
		return &e.Client
	}
	return &e.Sink
}

func bit(ok bool, b uint64) uint64 {
	if ok {
		return b
	}
	return 0
}

// room returns the current block with space for one more event.
func (p *Packed) room() []byte {
	if p.cur == nil || len(p.cur)-p.curLen < maxPackedLen+maxIDLen {
		if p.cur != nil {
			p.blocks = append(p.blocks, p.cur[:p.curLen])
		}
		p.cur, p.curLen = make([]byte, packedBlock), 0
	}
	return p.cur[:p.curLen]
}

// allBlocks returns the blocks written, the current one last.
func (p *Packed) allBlocks() [][]byte {
	if p.cur == nil {
		return p.blocks
	}
	return append(p.blocks[:len(p.blocks):len(p.blocks)], p.cur[:p.curLen])
}

// internRecent is intern through the field's recent strings; s is not
// empty (an empty slot never matches it).
func (p *Packed) internRecent(field int, s string) uint32 {
	l := &p.recent[field]
	if h := l.hit; l.s[h] == s {
		return l.id[h]
	}
	for i := range l.s {
		if l.s[i] == s {
			l.hit = uint8(i)
			return l.id[i]
		}
	}
	id := p.intern(s)
	i := l.next
	l.s[i], l.id[i], l.hit, l.next = s, id, i, (i+1)%uint8(len(l.s))
	return id
}

// internKind is intern through the kinds cache.
func (p *Packed) internKind(s string) uint32 {
	h := len(s)
	if h > 0 {
		h = h*7 + int(s[0]) + int(s[h-1])*3
	}
	c := &p.kinds[h%kindSlots]
	if c.ok && c.s == s {
		return c.id
	}
	id := p.intern(s)
	c.s, c.id, c.ok = s, id, true
	return id
}

func (p *Packed) intern(s string) uint32 {
	c := &p.cache[internHash(s)%internSlots]
	if c.ok && c.s == s {
		return c.id
	}
	id := p.add(s)
	c.s, c.id, c.ok = s, id, true
	return id
}

// add appends s to the string table and returns its id.
func (p *Packed) add(s string) uint32 {
	id := p.nstrs
	if id%strChunk == 0 {
		p.strs = append(p.strs, make([]string, 0, strChunk))
	}
	k := len(p.strs) - 1
	p.strs[k] = append(p.strs[k], s)
	p.nstrs++
	return uint32(id)
}

// str returns the string of an id.
func (p *Packed) str(id uint64) string { return p.strs[id/strChunk][id%strChunk] }

// internHash mixes the length and up to eight bytes from each end of s.
func internHash(s string) uint64 {
	n := len(s)
	h := uint64(n)
	if n >= 8 {
		h ^= load64(s) ^ load64(s[n-8:])*31
	} else {
		for i := range n {
			h = h<<8 | uint64(s[i])
		}
	}
	h ^= h >> 29
	h *= 0x9e3779b97f4a7c15
	return h >> 32
}

// load64 reads the first eight bytes of s as one little-endian word (the
// compiler makes it one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// All returns the events in the order they were appended, with their
// positions.
func (p *Packed) All() iter.Seq2[int, Event] {
	return func(yield func(int, Event) bool) {
		d := decoder{p: p}
		i := 0
		for _, blk := range p.allBlocks() {
			// Request ids are cut from the block as a string: one copy
			// per block, none per event.
			d.b, d.blk = blk, string(blk)
			for len(d.b) > 0 {
				var e Event
				d.decode(i, &e)
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

// decoder reads the events of a log in order.
type decoder struct {
	b      []byte // the rest of the block
	blk    string // the whole block
	p      *Packed
	at     int64  // the previous event's time, ns after base
	lastID string // the previous request id
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return d.p.str(d.uvarint()) }

func (d *decoder) float() float64 {
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

// requestID reads a request id (see Packed.Append).
func (d *decoder) requestID() string {
	n := d.uvarint()
	switch {
	case n == 0:
	case n&1 == 1:
		at := len(d.blk) - len(d.b)
		d.lastID = d.blk[at : at+int(n>>1)]
		d.b = d.b[n>>1:]
	default:
		d.lastID = d.p.str(n>>1 - 1)
	}
	return d.lastID
}

// decode reads the event at position i.
func (d *decoder) decode(i int, e *Event) {
	p := d.p
	mask := d.uvarint()
	e.Kind = Kind(d.str())
	d.at += d.varint()
	e.Time = p.base.Add(time.Duration(d.at))
	e.Seq = uint64(i) + 1
	if mask&fSeq != 0 {
		e.Seq = d.uvarint()
	}
	if mask&fRequestID != 0 {
		e.RequestID = d.requestID()
	}
	if mask&fRoute != 0 {
		e.Route = d.str()
	}
	if mask&fTarget != 0 {
		e.Target = d.str()
	}
	if mask&fTier != 0 {
		e.Tier = d.str()
	}
	if mask&fAttempt != 0 {
		e.Attempt = int(d.varint())
	}
	e.Stream = mask&fStream != 0
	if mask&fStatus != 0 {
		e.Status = int(d.varint())
	}
	if mask&fClass != 0 {
		e.Class = d.str()
	}
	if mask&fOutcome != 0 {
		e.Outcome = d.str()
	}
	if mask&fTTFT != 0 {
		e.TTFT = time.Duration(d.varint())
	}
	if mask&fDuration != 0 {
		e.Duration = time.Duration(d.varint())
	}
	if mask&fInputTokens != 0 {
		e.InputTokens = int(d.varint())
	}
	if mask&fOutputTokens != 0 {
		e.OutputTokens = int(d.varint())
	}
	if mask&fCachedTokens != 0 {
		e.CachedTokens = int(d.varint())
	}
	if mask&fCost != 0 {
		e.Cost = d.float()
	}
	if mask&fReplica != 0 {
		e.Replica = int(d.varint())
	}
	if mask&(fFrom|fTo|fReason|fName|fSeverity|fSink|fValue|fClient) != 0 {
		decodeRare(d, mask, e)
	}
	e.OK = mask&fOK != 0
}

// decodeRare reads the fields appendRare writes.
func decodeRare(d *decoder, mask uint64, e *Event) {
	for _, bit := range rareBits {
		if mask&bit != 0 {
			*rareString(e, bit) = d.str()
		}
	}
	if mask&fValue != 0 {
		e.Value = d.float()
	}
}
