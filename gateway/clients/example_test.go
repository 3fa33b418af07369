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
		Limits: clients.Limits{Routes: []string{"chat"}, RequestsPerMinute: 10, Budget: 5},
	}})

	if _, ok := table.Lookup("sk-wrong"); !ok {
		fmt.Println("unknown key: 401")
	}
	a, _ := table.Lookup("sk-client-1")
	d, _ := a.Admit(t0, clients.Ask{Route: "embeddings", Tokens: 100})
	fmt.Println(a.ID(), d.Verdict)
	// The request's worst case: 100 prompt tokens and 1000 output tokens,
	// $4 at the route's costliest target.
	d, res := a.Admit(t0, clients.Ask{Route: "chat", Tokens: 1100, Dollars: 4})
	fmt.Println(a.ID(), d.Verdict, a.Usage(t0).Reserved)
	a.Charge(t0.Add(time.Second), 1100, 3.5) // an attempt ended: 1100 tokens, $3.50
	res.Release(t0.Add(time.Second))         // the unspent $0.50 is back
	fmt.Println(a.Usage(t0.Add(time.Second)).Spent)

	d, _ = a.Admit(t0.Add(2*time.Second), clients.Ask{Route: "chat", Tokens: 1100, Dollars: 4})
	fmt.Println(d.Verdict) // 3.5 spent: one more worst case alone may overdraw
	d, _ = a.Admit(t0.Add(2*time.Second), clients.Ask{Route: "chat", Tokens: 1100, Dollars: 4})
	fmt.Println(d.Verdict, d.Limit, d.RetryAfter)
	// Output:
	// unknown key: 401
	// support-bot forbidden
	// support-bot allow 4
	// 3.5
	// allow
	// over_budget budget 1s
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
	a.Admit(t0, clients.Ask{Route: "chat"})
	a.Admit(t0, clients.Ask{Route: "chat"})

	// The syncer: A's use goes to the fleet's totals; B learns it.
	sent := a.Pending(t0)
	a.Merge(t0, sent, clients.Fleet{Window: sent.Window})
	b.Merge(t0, b.Pending(t0), clients.Fleet{Requests: sent.Requests})

	for range 2 {
		d, _ := b.Admit(t0, clients.Ask{Route: "chat"})
		fmt.Println("B:", d.Verdict)
	}
	// Output:
	// B: allow
	// B: rate_limited
}
