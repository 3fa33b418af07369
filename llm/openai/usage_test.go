package openai

import (
	"testing"

	"github.com/brownout-dev/brownout/llm"
)

// The stream encoder's usage is appendUsage; it must write what
// encoding/json writes of the wire usage, byte for byte.
func TestAppendUsageMatchesMarshal(t *testing.T) {
	for _, u := range []llm.Usage{
		{},
		{InputTokens: 9, OutputTokens: 2},
		{InputTokens: 9, OutputTokens: 2, CachedInputTokens: 3, ReasoningTokens: 1},
		{InputTokens: 1 << 40, OutputTokens: 7, CacheCreationTokens: 5},
		{InputTokens: -1, OutputTokens: -2, CachedInputTokens: -3, CacheCreationTokens: -4, ReasoningTokens: -5},
	} {
		want, err := marshal(toWireUsage(u))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendUsage([]byte("x"), u); string(got) != "x"+string(want) {
			t.Errorf("appendUsage(%+v) = %s, want x%s", u, got, want)
		}
	}
}
