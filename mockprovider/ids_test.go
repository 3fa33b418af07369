package mockprovider

import (
	"math/rand/v2"
	"testing"

	"github.com/brownout-dev/brownout/llm"
)

// plainIDs is the plain form of fillIDs: one symbol at a time.
func plainIDs(r *rand.Rand, prefix string, n int) []string {
	x := r.Uint64()
	out := make([]string, idBatch)
	for k := range out {
		id := []byte(prefix)
		var v uint64
		for i := range n {
			if i%10 == 0 {
				x += 0x9e3779b97f4a7c15
				v = splitmix(x)
			}
			id = append(id, idSymbols[v&63])
			v >>= 6
		}
		out[k] = string(id)
	}
	return out
}

// TestResponseIDsTwoAtATime: the IDs fillIDs writes two symbols at a time are the
// plain ones, batch after batch, in every format.
func TestResponseIDsTwoAtATime(t *testing.T) {
	for _, tc := range []struct {
		format llm.Format
		prefix string
		n      int
	}{{llm.FormatOpenAI, "chatcmpl-", 29}, {llm.FormatAnthropic, "msg_01", 22}, {llm.FormatGemini, "", 22}} {
		t.Run(string(tc.format), func(t *testing.T) {
			m := &Model{spec: ProviderSpec{Format: tc.format}, rnd: rand.New(rand.NewPCG(3, 4))}
			ref := rand.New(rand.NewPCG(3, 4))
			for batch := range 3 {
				want := plainIDs(ref, tc.prefix, tc.n)
				for k, w := range want {
					if got := m.responseID(); got != w {
						t.Fatalf("batch %d, id %d: %q, want %q", batch, k, got, w)
					}
				}
			}
		})
	}
}
