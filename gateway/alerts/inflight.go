package alerts

import (
	"hash/maphash"
	"math/bits"
	"time"
)

type reqState struct {
	route    string
	start    time.Time
	first    string // first target attempted
	servedBy string // target of the last successful attempt
}

// inflight is the table of requests in flight by id: open addressing with
// linear probing and backward-shift deletion, the state stored in the slot.
// It does what a map[string]*reqState did with fewer hashes: a slot is
// found once per event at most, and last remembers the slot of the request
// seen last, since a request's events come in runs (request.start then
// attempt.start, attempt.end then request.end) and those need no hash.
type inflight struct {
	seed   maphash.Seed
	k0, k1 uint64    // random keys of the short-id hash, drawn from seed
	slots  []reqSlot // len a power of two, or 0
	n      int       // slots in use
	last   int       // slot of the request seen last; checked before use
}

type reqSlot struct {
	hash uint64 // the id's hash with the low bit set; 0: empty
	id   string
	rs   reqState
}

func newInflight() inflight {
	t := inflight{seed: maphash.MakeSeed()}
	t.k0, t.k1 = maphash.String(t.seed, "k0"), maphash.String(t.seed, "k1")
	return t
}

// hash is a keyed hash of id with the low bit set. Ids of up to 16 bytes
// (the gateway's and the simulator's) are read as two overlapping words
// and mixed with the keys by one wide multiplication, a few instructions
// where maphash.String costs a call and its setup; longer ids, which a
// client may choose to collide on some bytes, get maphash.String.
func (t *inflight) hash(id string) uint64 {
	n := len(id)
	var a, b uint64
	switch {
	case n > 16:
		return maphash.String(t.seed, id) | 1
	case n >= 8:
		a, b = le64(id), le64(id[n-8:])
	case n >= 4:
		a = le32(id) | le32(id[n-4:])<<32
	default:
		for i := range n {
			a |= uint64(id[i]) << (8 * i)
		}
	}
	hi, lo := bits.Mul64(a^t.k0, b^t.k1^uint64(n))
	return (hi ^ lo) | 1
}

// le32 reads the first 4 bytes of s, little-endian.
func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

// le64 reads the first 8 bytes of s, little-endian.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// find returns the slot of id, or -1.
func (t *inflight) find(id string) int {
	if i := t.last; i < len(t.slots) && t.slots[i].hash != 0 && t.slots[i].id == id {
		return i
	}
	if t.n == 0 {
		return -1
	}
	h := t.hash(id)
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.hash == 0 {
			return -1
		}
		if s.hash == h && s.id == id {
			t.last = i
			return i
		}
	}
}

// get returns the state of id, nil if it is not in flight.
func (t *inflight) get(id string) *reqState {
	if i := t.find(id); i >= 0 {
		return &t.slots[i].rs
	}
	return nil
}

// put returns the state of id, zeroed: a new entry, or the entry of an id
// used again.
func (t *inflight) put(id string) *reqState {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	h := t.hash(id)
	mask := len(t.slots) - 1
	i := int(h) & mask
	for ; t.slots[i].hash != 0; i = (i + 1) & mask {
		if s := &t.slots[i]; s.hash == h && s.id == id {
			s.rs = reqState{}
			t.last = i
			return &s.rs
		}
	}
	t.slots[i] = reqSlot{hash: h, id: id}
	t.n++
	t.last = i
	return &t.slots[i].rs
}

func (t *inflight) grow() {
	old := t.slots
	t.slots = make([]reqSlot, max(16, 2*len(old)))
	mask := len(t.slots) - 1
	for k := range old {
		s := &old[k]
		if s.hash == 0 {
			continue
		}
		i := int(s.hash) & mask
		for t.slots[i].hash != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = *s
	}
}

// remove empties slot i, moving later entries of its probe run back so
// that every entry stays reachable from its home slot.
func (t *inflight) remove(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].hash != 0; j = (j + 1) & mask {
		home := int(t.slots[j].hash) & mask
		// The entry at j may fill the hole at i when its home is not in
		// the cyclic interval (i, j].
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = reqSlot{}
	t.n--
}

// removeIf removes every entry for which drop reports true.
func (t *inflight) removeIf(drop func(*reqState) bool) {
	for i := 0; i < len(t.slots); {
		if t.slots[i].hash != 0 && drop(&t.slots[i].rs) {
			// A later entry may have moved into i: look at it again. An
			// entry moved from the start of the table to its end was
			// already kept once and is kept again.
			t.remove(i)
			continue
		}
		i++
	}
}

// lastOK is when each target last served, for fallback_unexercised. The
// gateway has a few targets: a list searched from the one set last is
// cheaper than a map hashing the target per attempt; past maxListed
// targets an index map takes over the search.
type lastOK struct {
	list  []targetOK
	last  int            // index in list of the target set last
	index map[string]int // target -> index in list, once the list is long
}

type targetOK struct {
	target string
	at     time.Time
}

const maxListed = 16

// find returns the index of target in list, or -1.
func (l *lastOK) find(target string) int {
	if l.last < len(l.list) && l.list[l.last].target == target {
		return l.last
	}
	if l.index != nil {
		if i, ok := l.index[target]; ok {
			return i
		}
		return -1
	}
	for i := range l.list {
		if l.list[i].target == target {
			return i
		}
	}
	return -1
}

func (l *lastOK) set(target string, at time.Time) {
	i := l.find(target)
	if i < 0 {
		i = len(l.list)
		l.list = append(l.list, targetOK{target: target})
		if l.index != nil || len(l.list) > maxListed {
			if l.index == nil {
				l.index = make(map[string]int, 2*len(l.list))
				for k := range l.list {
					l.index[l.list[k].target] = k
				}
			}
			l.index[target] = i
		}
	}
	l.list[i].at = at
	l.last = i
}

// get returns when target last served, false if it never did.
func (l *lastOK) get(target string) (time.Time, bool) {
	if i := l.find(target); i >= 0 {
		return l.list[i].at, true
	}
	return time.Time{}, false
}
