package scenarios

import ()

// The simulator's timers: a 4-ary heap and FIFO queues of pointer-free
// timers ordered by (at, seq).

type timer struct {
	at   int64 // virtual ns since Epoch
	seq  uint64
	kind uint8
	idx  int32 // traffic or step index
	// req is the request's slot in sim.reqTab plus one, 0 for none: the
	// timers hold no pointer, so the heap costs the garbage collector
	// nothing and moves without write barriers.
	req int32
}

// before orders timers by (at, seq).
func (t *timer) before(u *timer) bool {
	return t.at < u.at || (t.at == u.at && t.seq < u.seq)
}

// timerHeap is a 4-ary min-heap of timers by (at, seq), typed so pushes do
// not box. Sequence numbers are unique, so timers pop in one order whatever
// the shape of the heap.
type timerHeap []timer

func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !t.before(&q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = t
}

func (h *timerHeap) pop() timer {
	q := *h
	top := q[0]
	n := len(q) - 1
	last := q[n]
	q = q[:n]
	*h = q
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, n); j++ {
			if q[j].before(&q[m]) {
				m = j
			}
		}
		if !q[m].before(&last) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = last
	return top
}

// timerFIFO is a queue of timers due in the order they were scheduled: a
// traffic class's client deadlines (each request's arrival plus the same
// timeout), kept out of the heap, which then holds only the few timers of
// requests in flight.
type timerFIFO struct {
	q    []timer
	head int
}

func (f *timerFIFO) push(t timer) {
	if f.head > 0 && f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	} else if f.head >= 1024 && f.head*2 >= len(f.q) {
		n := copy(f.q, f.q[f.head:])
		f.q, f.head = f.q[:n], 0
	}
	f.q = append(f.q, t)
}

func (f *timerFIFO) peek() *timer {
	if f.head == len(f.q) {
		return nil
	}
	return &f.q[f.head]
}

func (f *timerFIFO) pop() timer {
	t := f.q[f.head]
	f.head++
	return t
}
