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

// TestMemoizePromptsChangesNothing: a Planner, which memoizes prompts, gives
// for the same requests
// give the same plans (prompt tokens, cached tokens, content, timing) and
// the same journal as without, including past the memo's size, for
// messages it does not memoize (tools, images, several parts) and for
// prompts that recur under other models, and for rule matches. With
// shared, requests share their messages as the simulator's do (the memo
// finds them by address), some of which are changed in place, the models
// are reset midway (the prompt cache forgets).
func TestMemoizePromptsChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		memo   int
		shared bool
	}{{1, false}, {3, false}, {1000, false}, {3, true}, {1000, true}} {
		memo := tc.memo
		t.Run(fmt.Sprintf("memo %d shared %v", memo, tc.shared), func(t *testing.T) {
			s := realistic()
			s.Models = append(s.Models, mockprovider.ModelSpec{Name: "gpt-4o-mini", OutputTokens: mockprovider.Length{Min: 5, Max: 30}})
			s.PromptCache = &mockprovider.CacheSpec{TTL: yamlfile.Duration(time.Minute), MinTokens: 10}
			plain := newModel(t, s)
			memoized, err := mockprovider.NewPlannerMemo(s, nil, memo)
			if err != nil {
				t.Fatal(err)
			}
			rnd := rand.New(rand.NewPCG(1, 2))
			prompts := []string{strings.Repeat("incident gateway ", 40) + "one", strings.Repeat("incident gateway ", 40) + "two", "short", "naïve café ’quote’", "What is the capital of France?"}
			pool := make([][]llm.Message, len(prompts))
			for k, p := range prompts {
				pool[k] = userReq("", p).Messages
			}
			for i := range 300 {
				now := t0.Add(time.Duration(i) * 700 * time.Millisecond)
				model := []string{"gpt-4o", "gpt-4o-mini"}[rnd.IntN(2)]
				req := userReq(model, prompts[rnd.IntN(len(prompts))])
				if tc.shared {
					k := rnd.IntN(len(pool))
					if rnd.IntN(10) == 0 { // changed in place: another text at the same address
						pool[k][0].Content[0].Text = prompts[rnd.IntN(len(prompts))] + fmt.Sprint(i%3)
					}
					req.Messages = pool[k]
					if i == 150 {
						plain.Reset()
						memoized.Reset()
					}
				}
				switch rnd.IntN(5) {
				case 0: // a prefill continuing a partial answer
					req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart(prompts[rnd.IntN(len(prompts))])}})
				case 1: // two parts: not memoized
					msgs := append([]llm.Message(nil), req.Messages...)
					msgs[0].Content = append(msgs[0].Content[:1:1], llm.TextPart("and more"))
					req.Messages = msgs
				case 2:
					req.Tools = []llm.Tool{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}}
				case 3:
					req.Messages = append([]llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart(prompts[0])}}}, req.Messages...)
				}
				req.Stream = rnd.IntN(2) == 0
				a := plain.Plan(now, req, mockprovider.Meta{RequestID: fmt.Sprint(i)})
				b := new(mockprovider.Plan)
				memoized.PlanInto(b, now, req, mockprovider.Meta{RequestID: fmt.Sprint(i)})
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
