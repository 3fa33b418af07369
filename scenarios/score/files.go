package score

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/internal/jsonstr"
)

// Log returns the run's event log.
func (r *Result) Log() []events.Event {
	if r.log == nil && r.packed != nil {
		r.log = r.packed.Events()
	}
	return r.log
}

// Journal returns the mocks' journals: their entries in the order of the
// scenario's providers.
func (r *Result) Journal() []JournalEntry {
	if r.journal == nil && r.journalOf != nil {
		r.journal = r.journalOf()
	}
	return r.journal
}

// DropLog lets go of the run's event log and journals, keeping its
// scores (a seed sweep keeps thousands of results).
func (r *Result) DropLog() { r.log, r.packed, r.journal, r.journalOf = nil, nil, nil, nil }

// JournalFrom has Journal make the mocks' journals on demand with f (a
// long simulated run journals hundreds of thousands of attempts).
func (r *Result) JournalFrom(f func() []JournalEntry) { r.journalOf = f }

// JournalFile is the file WriteDir writes the mocks' journals to, one
// JSON JournalEntry a line, beside events.jsonl.
const JournalFile = "journal.jsonl"

// WriteDir writes result.json, events.jsonl and the mocks' journals
// (JournalFile) into dir (created if needed). Each is a pure function of the
// result, so a simulated run with the same file and seed writes
// byte-identical files.
func (r *Result) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return err
	}
	write := func() error { return events.WriteJSONL(f, r.log) }
	if r.log == nil && r.packed != nil {
		write = func() error { return r.packed.WriteJSONL(f) }
	}
	if err := write(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return r.writeJournal(filepath.Join(dir, JournalFile))
}

func (r *Result) writeJournal(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var line []byte
	js := r.Journal()
	for i := range js {
		line = append(js[i].appendJSON(line[:0]), '\n')
		if _, err := w.Write(line); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// appendJSON appends j as encoding/json writes it (a test holds the two
// equal), without reflection: a long simulated run journals hundreds of
// thousands of attempts.
func (j *JournalEntry) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = j.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","request_id":`...)
	b = jsonstr.Append(b, j.RequestID, true)
	b = append(b, `,"target":`...)
	b = jsonstr.Append(b, j.Target, true)
	b = append(b, `,"fault":`...)
	b = jsonstr.Append(b, j.Fault, true)
	b = append(b, `,"outcome":`...)
	b = jsonstr.Append(b, j.Outcome, true)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(j.OutputTokens), 10)
	b = append(b, `,"corrupted":`...)
	b = strconv.AppendBool(b, j.Corrupted)
	if j.InputTokens != 0 {
		b = append(b, `,"input_tokens":`...)
		b = strconv.AppendInt(b, int64(j.InputTokens), 10)
	}
	if j.CachedTokens != 0 {
		b = append(b, `,"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(j.CachedTokens), 10)
	}
	return append(b, '}')
}
