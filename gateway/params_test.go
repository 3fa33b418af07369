package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
)

func TestTargetOrder(t *testing.T) {
	r := policy.Route{Name: "chat", Tiers: []string{"primary", "equivalent", "cached"}, Targets: []policy.Target{
		{Provider: "b", Model: "eq", Tier: "equivalent"},
		{Provider: "a", Model: "p2", Priority: 1},
		{Provider: "a", Model: "p1"},
	}}
	assert.Equal(t, []string{"a:p1", "a:p2", "b:eq"}, lifecycle.TargetOrder(&r))
}
