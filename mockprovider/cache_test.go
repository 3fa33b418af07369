package mockprovider

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestPromptCacheSweepMemoized: while the prompt cache sweeps expired
// prefixes again and again (a small bound), a memoized model, whose
// messages keep the records of their prefixes, counts the cached tokens a
// plain one does.
func TestPromptCacheSweepMemoized(t *testing.T) {
	spec := ProviderSpec{Name: "p", Format: llm.FormatOpenAI, Seed: 3,
		Models:      []ModelSpec{{Name: "m", OutputTokens: Length{Fixed: 4}}, {Name: "n", OutputTokens: Length{Fixed: 4}}},
		PromptCache: &CacheSpec{TTL: yamlfile.Duration(2 * time.Second), MinTokens: 1}}
	plain, err := NewModel(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	memoized, _ := NewModel(spec, nil)
	memoized.memo = newPromptMemo(100)
	plain.cache.max, memoized.cache.max = 6, 6
	pool := make([][]llm.Message, 12)
	for k := range pool {
		pool[k] = []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(fmt.Sprint("prompt number ", k))}}}
	}
	r := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cached := 0
	for i := range 400 {
		now := t0.Add(time.Duration(i) * 300 * time.Millisecond)
		req := &llm.Request{Model: []string{"m", "n"}[r.IntN(2)], Messages: pool[r.IntN(len(pool))]}
		a, b := plain.Plan(now, req, Meta{}), memoized.Plan(now, req, Meta{})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("request %d: plans differ", i)
		}
		if a.Response.Usage.CachedInputTokens > 0 {
			cached++
		}
		plain.Finish(now, a)
		memoized.Finish(now, b)
	}
	if cached == 0 || cached == 400 {
		t.Fatalf("%d of 400 requests hit the cache: the test does not exercise it", cached)
	}
}
