package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll reads the records of path and of every rotated file beside it.
func readAll(t *testing.T, path string) (recs []Record, files int) {
	t.Helper()
	names, err := filepath.Glob(path + "*")
	require.NoError(t, err)
	for _, n := range names {
		f, err := os.Open(n)
		require.NoError(t, err)
		rs, err := Read(f)
		require.NoError(t, err, n)
		_ = f.Close()
		recs = append(recs, rs...)
	}
	return recs, len(names)
}

// Rotation under load: writers race rotations by size and by age, and
// every record lands whole in exactly one file.
func TestRotationLosesNoRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	w, err := OpenFile(path)
	require.NoError(t, err)
	var clock sync.Mutex
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := t0
	w.now = func() time.Time { clock.Lock(); defer clock.Unlock(); now = now.Add(time.Millisecond); return now }
	w.SetRotation(Rotation{MaxBytes: 8 << 10, MaxAge: time.Second})

	const writers, each = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				w.Write(&Record{Time: t0, RequestID: fmt.Sprintf("r%d-%d", g, i), Route: "chat", Target: "openai:gpt-4o", Cost: 0.001})
			}
		})
	}
	wg.Go(func() { // the flush loop: flushes and age rotations
		for i := range 200 {
			_ = w.Flush()
			assert.NoError(t, w.Rotate(t0.Add(time.Duration(i)*time.Second)))
		}
	})
	wg.Wait()
	require.NoError(t, w.Close())

	recs, files := readAll(t, path)
	require.Greater(t, files, 10, "the files rotated and were kept")
	seen := map[string]bool{}
	for _, r := range recs {
		require.False(t, seen[r.RequestID], "record %s twice", r.RequestID)
		seen[r.RequestID] = true
	}
	require.Len(t, seen, writers*each, "every record is in exactly one file")
}

func TestRotationBySizeKeepsFilesBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	w, err := OpenFile(path)
	require.NoError(t, err)
	w.SetRotation(Rotation{MaxBytes: 1000})
	for i := range 100 {
		w.Write(&Record{RequestID: fmt.Sprint(i)})
	}
	require.NoError(t, w.Close())
	names, _ := filepath.Glob(path + "*")
	for _, n := range names {
		st, err := os.Stat(n)
		require.NoError(t, err)
		// A file is rotated at the first record past the limit: at most one
		// record (under 300 bytes) beyond it.
		require.Less(t, st.Size(), int64(1300), n)
	}
	recs, _ := readAll(t, path)
	require.Len(t, recs, 100)
}

func TestRotationByAge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	w, err := OpenFile(path)
	require.NoError(t, err)
	t0 := time.Now()
	w.SetRotation(Rotation{MaxAge: time.Hour})
	w.Write(&Record{RequestID: "a"})
	require.NoError(t, w.Rotate(t0.Add(59*time.Minute)))
	_, files := readAll(t, path)
	require.Equal(t, 1, files, "not yet an hour old")
	require.NoError(t, w.Rotate(t0.Add(61*time.Minute)))
	require.NoError(t, w.Rotate(t0.Add(200*time.Minute)), "an empty file is not rotated")
	w.Write(&Record{RequestID: "b"})
	require.NoError(t, w.Close())
	recs, files := readAll(t, path)
	require.Equal(t, 2, files)
	require.Len(t, recs, 2)
}
