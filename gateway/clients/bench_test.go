package clients

import (
	"testing"
	"time"
)

// BenchmarkAdmit is the success path of one request: the key checked, the
// request admitted under every limit, one attempt charged, the slot
// released.
func BenchmarkAdmit(b *testing.B) {
	tb, err := New([]Client{
		{ID: "other", Digest: Digest("sk-other-0123456789abcdef0123456789")},
		{ID: "app", Digest: Digest("sk-app-0123456789abcdef0123456789abc"), Limits: Limits{
			Routes: []string{"chat", "fast"}, RequestsPerMinute: 1 << 30, TokensPerMinute: 1 << 40,
			Budget: 1e12, MaxConcurrent: 64,
		}},
	})
	if err != nil {
		b.Fatal(err)
	}
	key := "sk-app-0123456789abcdef0123456789abc"
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		a, ok := tb.Lookup(key)
		if !ok {
			b.Fatal("lookup")
		}
		d, r := a.Admit(now, Ask{Route: "chat", Tokens: 250, Dollars: 0.003})
		if d.Verdict != Allow {
			b.Fatal(d)
		}
		tb.Get(a.ID()).Charge(now, 400, 0.002)
		r.Release(now)
	}
}
