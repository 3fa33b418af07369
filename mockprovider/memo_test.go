package mockprovider_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// TestMemoizePromptsChangesNothing: with MemoizePrompts the same requests
// give the same plans (prompt tokens, cached tokens, content, timing) and
// the same journal as without, including past the memo's size, for
// messages it does not memoize (tools, images, several parts) and for
// prompts that recur under other models, and for rule matches.
func TestMemoizePromptsChangesNothing(t *testing.T) {
	for _, memo := range []int{1, 3, 1000} {
		t.Run(fmt.Sprintf("memo %d", memo), func(t *testing.T) {
			s := realistic()
			s.Models = append(s.Models, mockprovider.ModelSpec{Name: "gpt-4o-mini", OutputTokens: mockprovider.Length{Min: 5, Max: 30}})
			s.PromptCache = &mockprovider.CacheSpec{TTL: yamlfile.Duration(time.Minute), MinTokens: 10}
			plain, memoized := newModel(t, s), newModel(t, s)
			memoized.MemoizePrompts(memo)
			rnd := rand.New(rand.NewPCG(1, 2))
			prompts := []string{strings.Repeat("incident gateway ", 40) + "one", strings.Repeat("incident gateway ", 40) + "two", "short", "naïve café ’quote’", "What is the capital of France?"}
			for i := range 300 {
				now := t0.Add(time.Duration(i) * 700 * time.Millisecond)
				model := []string{"gpt-4o", "gpt-4o-mini"}[rnd.IntN(2)]
				req := userReq(model, prompts[rnd.IntN(len(prompts))])
				switch rnd.IntN(5) {
				case 0: // a prefill continuing a partial answer
					req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart(prompts[rnd.IntN(len(prompts))])}})
				case 1: // two parts: not memoized
					req.Messages[0].Content = append(req.Messages[0].Content, llm.TextPart("and more"))
				case 2:
					req.Tools = []llm.Tool{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}}
				case 3:
					req.Messages = append([]llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(prompts[0])}}}, req.Messages...)
				}
				req.Stream = rnd.IntN(2) == 0
				a := plain.Plan(now, req, mockprovider.Meta{RequestID: fmt.Sprint(i)})
				b := memoized.Plan(now, req, mockprovider.Meta{RequestID: fmt.Sprint(i)})
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("request %d: plans differ:\n%+v\n%+v", i, a, b)
				}
				plain.Finish(now.Add(a.End()), a)
				memoized.Finish(now.Add(b.End()), b)
			}
			if !reflect.DeepEqual(plain.Journal(), memoized.Journal()) {
				t.Error("journals differ")
			}
			cachedSome := false
			for _, e := range plain.Journal() {
				cachedSome = cachedSome || e.CachedTokens > 0
			}
			if !cachedSome {
				t.Error("no request hit the prompt cache: the test does not exercise it")
			}
		})
	}
}
