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
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	bw  *bufio.Writer
	enc *json.Encoder
	err error
}

// OpenFile opens (creating, appending) a usage file.
func OpenFile(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	return &Writer{f: f, bw: bw, enc: json.NewEncoder(bw)}, nil
}

// Write buffers one record. The first write error is kept and returned by
// Flush and Close.
func (w *Writer) Write(r *Record) {
	w.mu.Lock()
	if err := w.enc.Encode(r); err != nil && w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
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
