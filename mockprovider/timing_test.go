package mockprovider

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/yamlfile"
)

// plainTiming is Model.timing's plain form: one token at a time, each gap
// from the next 16 bits of the splitmix64 sequence (a value per four
// tokens).
func plainTiming(r *rand.Rand, st *modelState, n int) (time.Duration, []time.Duration) {
	var ttft time.Duration
	if !st.ttft.IsZero() {
		ttft = st.ttft.Sample(r)
	}
	times := make([]time.Duration, n)
	if n == 0 {
		return ttft, times
	}
	times[0] = ttft
	t := ttft
	gap := float64(time.Second) / st.spec.TokensPerSecond
	j := st.spec.Jitter.F()
	switch {
	case st.spec.TokensPerSecond <= 0:
		for i := 1; i < n; i++ {
			times[i] = ttft
		}
	case j <= 0 || n == 1:
		for i := 1; i < n; i++ {
			t += time.Duration(gap)
			times[i] = t
		}
	default:
		step := int64(gap * j / (65535.0 / 2) * 65536)
		lo := time.Duration(gap - gap*j)
		x := r.Uint64()
		var b uint64
		for i := 1; i < n; i++ {
			if (i-1)%4 == 0 {
				x += 0x9e3779b97f4a7c15
				b = splitmix(x)
			}
			t += lo + time.Duration(step*int64(b&0xffff)>>16)
			b >>= 16
			times[i] = t
		}
	}
	return ttft, times
}

// TestTiming: the token times timing writes are the plain ones, and it
// draws what the plain form draws, for every answer length, pace and
// jitter.
func TestTiming(t *testing.T) {
	lat := faults.Latency{Median: yamlfile.Duration(300 * time.Millisecond), P99: yamlfile.Duration(time.Second)}
	for _, ms := range []ModelSpec{
		{TTFT: lat, TokensPerSecond: 90, Jitter: 0.2},
		{TTFT: lat, TokensPerSecond: 3, Jitter: 1},
		{TokensPerSecond: 1e6, Jitter: 0.05},
		{TTFT: lat, TokensPerSecond: 50},
		{TTFT: lat},
	} {
		st := &modelState{spec: ms, ttft: ms.TTFT.Sampler()}
		m := &Model{rnd: rand.New(rand.NewPCG(8, 9))}
		ref := rand.New(rand.NewPCG(8, 9))
		for n := range 70 {
			for _, size := range []int{n, 1000 + n} {
				p := faults.NewPlan()
				p.Chunks = make([]string, size)
				m.timing(p, st)
				ttft, want := plainTiming(ref, st, size)
				if p.TTFT != ttft || !slices.Equal(p.TokenTimes, want) {
					t.Fatalf("%+v, %d tokens: ttft %v times %v, want %v %v", ms, size, p.TTFT, p.TokenTimes, ttft, want)
				}
			}
		}
		if m.rnd.Uint64() != ref.Uint64() {
			t.Fatalf("%+v: the sources drew differently", ms)
		}
	}
}

// BenchmarkTiming measures drawing the token times of a 100-token answer.
func BenchmarkTiming(b *testing.B) {
	ms := ModelSpec{TTFT: faults.Fixed(300 * time.Millisecond), TokensPerSecond: 90, Jitter: 0.2}
	st := &modelState{spec: ms, ttft: ms.TTFT.Sampler()}
	m := &Model{rnd: rand.New(rand.NewPCG(8, 9))}
	p := faults.NewPlan()
	p.Chunks = make([]string, 100)
	b.ReportAllocs()
	for b.Loop() {
		m.timing(p, st)
	}
}
