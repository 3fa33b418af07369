package clients_test

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/gateway/clients"
)

func Example() {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	table, _ := clients.New([]clients.Client{{
		ID: "support-bot", Digest: clients.Digest("sk-client-1"),
		Limits: clients.Limits{Routes: []string{"chat"}, RequestsPerMinute: 1, Budget: 5},
	}})

	if _, ok := table.Lookup("sk-wrong"); !ok {
		fmt.Println("unknown key: 401")
	}
	a, _ := table.Lookup("sk-client-1")
	fmt.Println(a.ID(), a.Admit(t0, "embeddings", 100).Verdict)
	d := a.Admit(t0, "chat", 100)
	fmt.Println(a.ID(), d.Verdict)
	a.Charge(t0.Add(time.Second), 1500, 5.25) // an attempt ended: 1500 tokens, $5.25
	a.Release(t0.Add(time.Second), 100)

	d = a.Admit(t0.Add(2*time.Second), "chat", 100)
	fmt.Println(d.Verdict, d.Limit, d.RetryAfter)
	// Output:
	// unknown key: 401
	// support-bot forbidden
	// support-bot allow
	// over_budget budget 14h59m58s
}

// Two replicas of a fleet share a client's requests per minute: after a
// sync, each replica's bucket is debited by the other's use.
func ExampleAccount_Merge() {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	replica := func() *clients.Account {
		table, _ := clients.New([]clients.Client{{ID: "batch", Digest: clients.Digest("sk-batch"),
			Limits: clients.Limits{RequestsPerMinute: 3}}})
		return table.Get("batch")
	}
	a, b := replica(), replica()
	a.Admit(t0, "chat", 0)
	a.Admit(t0, "chat", 0)

	// The syncer: A's use goes to the fleet's totals; B learns it.
	sent := a.Pending(t0)
	a.Merge(t0, sent, clients.Fleet{Window: sent.Window})
	b.Merge(t0, b.Pending(t0), clients.Fleet{Requests: sent.Requests})

	fmt.Println("B:", b.Admit(t0, "chat", 0).Verdict)
	fmt.Println("B:", b.Admit(t0, "chat", 0).Verdict)
	// Output:
	// B: allow
	// B: rate_limited
}
