package usage

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/brownout-dev/brownout/events"
)

// Record is the usage of one upstream attempt.
type Record struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Route     string    `json:"route"`
	Target    string    `json:"target"` // provider:model
	Tier      string    `json:"tier,omitempty"`
	// Client is the gateway client's ID (never its key); empty when the
	// gateway is open.
	Client  string `json:"client,omitempty"`
	Attempt int    `json:"attempt"`
	// Class is the attempt's outcome class ("ok", "rate_limited", ...).
	Class string `json:"class"`
	// Outcome is "served" when this attempt's answer was served, else
	// "failed" (a failed attempt may still have consumed tokens).
	Outcome      string  `json:"outcome"`
	Status       int     `json:"status,omitempty"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CachedTokens int     `json:"cached_tokens,omitempty"`
	Cost         float64 `json:"cost"`
}

// Outcomes of one attempt.
const (
	Served = "served"
	Failed = "failed"
)

// FromEvent returns the record of an attempt.end event: the core prices
// the attempt (Cost) from the target's pricing table.
func FromEvent(ev events.Event) Record {
	outcome := Failed
	if ev.Class == "ok" {
		outcome = Served
	}
	return Record{Time: ev.Time, RequestID: ev.RequestID, Route: ev.Route, Target: ev.Target, Tier: ev.Tier, Client: ev.Client,
		Attempt: ev.Attempt, Class: ev.Class, Outcome: outcome, Status: ev.Status,
		InputTokens: ev.InputTokens, OutputTokens: ev.OutputTokens, CachedTokens: ev.CachedTokens, Cost: ev.Cost}
}

// Writer appends records to a JSONL file. It is safe for concurrent use;
// records are buffered and written by Flush (call it periodically) and Close.
//
// With rotation options (SetRotation) the file is rotated by size (checked
// at every record) and by age (checked by Rotate): the current file is
// renamed FILE.YYYYMMDDTHHMMSS.NNNNNNNNNZ (the time of the rotation) and
// kept, and a new FILE is started. A rotation happens under the writer's
// lock after a flush, so no record is lost or split across files.
type Writer struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	bw     *bufio.Writer
	enc    *json.Encoder
	err    error
	size   int64     // bytes in the current file, buffered ones included
	opened time.Time // when the current file was started
	rot    Rotation
	now    func() time.Time
}

// Rotation says when a Writer starts a new file. Zero fields never rotate.
type Rotation struct {
	// MaxBytes rotates once the file reaches this size.
	MaxBytes int64
	// MaxAge rotates a file this long after it was started (see Rotate).
	MaxAge time.Duration
}

// OpenFile opens (creating, appending) a usage file.
func OpenFile(path string) (*Writer, error) {
	w := &Writer{path: path, now: time.Now}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// open opens w.path for appending; the caller holds the lock (or owns w).
func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("usage: %w", err)
	}
	w.f, w.size, w.opened = f, st.Size(), w.now()
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(f, 64<<10)
		w.enc = json.NewEncoder((*counter)(w))
	} else {
		w.bw.Reset(f)
	}
	return nil
}

// counter counts the bytes encoded into the current file.
type counter Writer

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.bw.Write(p)
	c.size += int64(n)
	return n, err
}

// SetRotation sets when the file rotates (it may change at any time, e.g.
// on a configuration reload).
func (w *Writer) SetRotation(r Rotation) {
	w.mu.Lock()
	w.rot = r
	w.mu.Unlock()
}

// Write buffers one record, rotating first when the file is full. The
// first write error is kept and returned by Flush and Close.
func (w *Writer) Write(r *Record) {
	w.mu.Lock()
	if w.rot.MaxBytes > 0 && w.size >= w.rot.MaxBytes {
		w.rotate(w.now())
	}
	if err := w.enc.Encode(r); err != nil && w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// Rotate rotates the file if it is older than the rotation's MaxAge at now
// (and not empty); the gateway calls it once a second.
func (w *Writer) Rotate(now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rot.MaxAge > 0 && w.size > 0 && now.Sub(w.opened) >= w.rot.MaxAge {
		w.rotate(now)
	}
	return w.err
}

// rotate keeps the current file under a time-stamped name and starts a
// new one; the caller holds the lock. A failure is kept in w.err and the
// current file stays in use.
func (w *Writer) rotate(now time.Time) {
	if err := w.bw.Flush(); err != nil {
		w.keep(err)
		return
	}
	base := w.path + "." + now.UTC().Format("20060102T150405.000000000Z")
	dst := base
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); os.IsNotExist(err) {
			break
		}
		dst = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(w.path, dst); err != nil {
		w.keep(err)
		return
	}
	old := w.f
	if err := w.open(); err != nil {
		// Keep writing to the renamed file rather than lose records.
		w.keep(err)
		w.f = old
		return
	}
	if err := old.Close(); err != nil {
		w.keep(err)
	}
}

func (w *Writer) keep(err error) {
	if w.err == nil {
		w.err = fmt.Errorf("usage: rotating %s: %w", w.path, err)
	}
}

// Flush writes buffered records to the file.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.bw.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	err := w.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Read reads records written by a Writer. An unparsable line is an error
// naming its line number.
func Read(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []Record
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return out, fmt.Errorf("usage: line %d: %w", line, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// By is what Report groups records by.
type By string

// Groupings.
const (
	ByTarget By = "target"
	ByRoute  By = "route"
	ByTier   By = "tier"
	ByClient By = "client"
)

// Query selects records: From inclusive, To exclusive; zero times are open.
type Query struct {
	From, To time.Time
	By       By
}

// Row is one group of a report.
type Row struct {
	Key            string  `json:"key"`
	Requests       int     `json:"requests"` // distinct request ids
	Attempts       int     `json:"attempts"`
	FailedAttempts int     `json:"failed_attempts"`
	InputTokens    int     `json:"input_tokens"`
	OutputTokens   int     `json:"output_tokens"`
	CachedTokens   int     `json:"cached_tokens"`
	Cost           float64 `json:"cost"`
	// Share is this group's share of the total cost.
	Share float64 `json:"share"`
}

// Report groups the records in q's range, most expensive first (then by key).
func Report(recs []Record, q Query) ([]Row, error) {
	key := func(r *Record) string { return r.Target }
	switch q.By {
	case ByTarget, "":
	case ByRoute:
		key = func(r *Record) string { return r.Route }
	case ByTier:
		key = func(r *Record) string { return r.Tier }
	case ByClient:
		key = func(r *Record) string { return r.Client }
	default:
		return nil, fmt.Errorf("usage: cannot group by %q (target, route, tier or client)", q.By)
	}
	rows := map[string]*Row{}
	reqs := map[string]map[string]bool{}
	total := 0.0
	for i := range recs {
		r := &recs[i]
		if (!q.From.IsZero() && r.Time.Before(q.From)) || (!q.To.IsZero() && !r.Time.Before(q.To)) {
			continue
		}
		k := key(r)
		if k == "" {
			k = "(none)"
		}
		row := rows[k]
		if row == nil {
			row = &Row{Key: k}
			rows[k] = row
			reqs[k] = map[string]bool{}
		}
		if !reqs[k][r.RequestID] {
			reqs[k][r.RequestID] = true
			row.Requests++
		}
		row.Attempts++
		if r.Outcome != Served {
			row.FailedAttempts++
		}
		row.InputTokens += r.InputTokens
		row.OutputTokens += r.OutputTokens
		row.CachedTokens += r.CachedTokens
		row.Cost += r.Cost
		total += r.Cost
	}
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		if total > 0 {
			r.Share = r.Cost / total
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Row) int {
		switch {
		case a.Cost > b.Cost:
			return -1
		case a.Cost < b.Cost:
			return 1
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return out, nil
}

// WriteTable writes rows as an aligned text table with a total line.
func WriteTable(w io.Writer, by By, rows []Row) error {
	if by == "" {
		by = ByTarget
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\trequests\tattempts\tfailed\tinput tok\toutput tok\tcost $\tshare\t\n", by)
	var t Row
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.4f\t%.1f%%\t\n", r.Key, r.Requests, r.Attempts, r.FailedAttempts, r.InputTokens, r.OutputTokens, r.Cost, 100*r.Share)
		t.Attempts += r.Attempts
		t.FailedAttempts += r.FailedAttempts
		t.InputTokens += r.InputTokens
		t.OutputTokens += r.OutputTokens
		t.Cost += r.Cost
	}
	fmt.Fprintf(tw, "total\t\t%d\t%d\t%d\t%d\t%.4f\t\t\n", t.Attempts, t.FailedAttempts, t.InputTokens, t.OutputTokens, t.Cost)
	return tw.Flush()
}
