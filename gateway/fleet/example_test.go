package fleet_test

import (
	"context"
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/gateway/fleet"
	"github.com/brownout-dev/brownout/gateway/policy"
)

// Two replicas share their breakers through one store: a breaker replica A
// opens is open on replica B.
func Example() {
	cfg := policy.Config{Routes: []policy.Route{{Name: "chat", Targets: []policy.Target{
		{Provider: "openai", Model: "gpt-4o"}, {Provider: "anthropic", Model: "claude", Priority: 1},
	}}}}
	store := &fleet.Memory{} // fleet.NewRedis("redis://127.0.0.1:6379/0", ...) for a real fleet
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	replica := func() (*policy.Engine, *fleet.Fleet) {
		var e *policy.Engine
		f := fleet.New(store, func() *policy.Engine { return e }, fleet.Options{})
		e, _ = policy.New(cfg, policy.Options{Fleet: f})
		ready := make(chan struct{})
		go func() { close(ready); _ = f.Run(ctx) }()
		<-ready
		return e, f
	}
	a, fa := replica()
	b, fb := replica()
	time.Sleep(10 * time.Millisecond) // both subscribed

	now := time.Now()
	_ = a.Signal(now, "openai:gpt-4o", "probe_failures", policy.Trip)
	fa.Sync() // A's proposal reached the store...
	fb.Sync() // ...and B applied what the store published
	u, _ := b.Breaker("openai:gpt-4o")
	fmt.Println("on B:", u.State, "version", u.Version)
	// Output: on B: open version 1
}
