package score

import (
	"time"

	"github.com/brownout-dev/brownout/events"
)

type reqRec struct {
	start    int64
	end      int64
	ttft     time.Duration
	dur      time.Duration
	cost     float64
	attempts int32
	served   int32 // the attempt that answered (index in atts), -1 for none
	first    int32 // the first attempt whose tokens reached the user, -1 for none
	tgt      int32 // the target as a scored target (index in names), -1 when not one
	target   int32 // the target string's index in names (0: "")
	rt       int32 // route's index in routes
	outcome  uint8
	ended    bool
	bad      bool // served corrupted
	stream   bool // the user asked for a stream
	good     bool // met every part of the SLO (set by sums)
	inFault  bool // started inside a fault window
}

// Request outcomes as reqRec.outcome.
const (
	outOther uint8 = iota
	outServed
	outDegraded
	outFailed
)

func outcomeOf(o string) uint8 {
	switch o {
	case events.OutcomeServed:
		return outServed
	case events.OutcomeDegraded:
		return outDegraded
	case events.OutcomeFailed:
		return outFailed
	}
	return outOther
}

type attRec struct {
	start, end     int64
	ttft           time.Duration
	in, out, cache int
	cost           float64
	ri             int32 // the request (index in reqs), -1 for none
	tgt            int32 // target's index in names
	class          int32 // index in classes
	ended          bool
	stream         bool
	ok             bool // ended with class "ok"
}

type faultWin struct {
	step, target, kind string
	start, end         time.Time
	from, to           int64 // start and end as offsets
	open               bool  // while reading: no fault.end yet
}

type transition struct {
	t      time.Time
	target string
	from   string
	to     string
	kind   events.Kind
	// reason is the event's Reason (a transition's) or the detector's
	// name (a signal's): what the gateway says caused it.
	reason string
}

// strIndex numbers a small set of strings (targets, routes, classes) in the
// order they are first seen.
type strIndex struct {
	names []string
	m     map[string]int32
	last  int32 // the last one found: runs of the same string are common
}

func (x *strIndex) find(s string) (int32, bool) {
	if int(x.last) < len(x.names) && x.names[x.last] == s {
		return x.last, true
	}
	i, ok := x.m[s]
	if !ok {
		return -1, false
	}
	x.last = i
	return i, true
}

func (x *strIndex) add(s string) int32 {
	if i, ok := x.find(s); ok {
		return i
	}
	if x.m == nil {
		x.m = map[string]int32{}
	}
	i := int32(len(x.names))
	x.names = append(x.names, s)
	x.m[s] = i
	return i
}
