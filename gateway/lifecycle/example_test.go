package lifecycle_test

import (
	"fmt"
	"time"

	"github.com/brownout-dev/brownout/gateway/lifecycle"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/yamlfile"
)

// A stream stalls after three tokens. The idle gap (2s) is shorter than the
// first-token timeout (8s): the watchdog fires 2s after the last token.
func ExampleWatchdog() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var w lifecycle.Watchdog
	wake := w.Start(start, policy.Timeouts{FirstToken: yamlfile.Duration(8 * time.Second), Idle: yamlfile.Duration(2 * time.Second)})
	fmt.Println("armed at", wake.Sub(start))
	for _, at := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond} {
		if d, ok := w.Token(start.Add(at), 1); ok {
			wake = d
			fmt.Println("re-armed at", wake.Sub(start))
		}
	}
	for {
		v, class, next := w.Fire(wake)
		if v == lifecycle.Expired {
			fmt.Println(class, "at", wake.Sub(start))
			break
		}
		wake = next
		fmt.Println("still within; next check at", wake.Sub(start))
	}
	// Output:
	// armed at 8s
	// re-armed at 2.1s
	// still within; next check at 2.3s
	// stall at 2.3s
}

// A 429 with a Retry-After header is rate_limited, retried after 2s.
func ExampleClassify() {
	o := lifecycle.Classify(&lifecycle.Observation{Status: 429, RetryAfter: 2 * time.Second})
	fmt.Println(o.Class, o.RetryAfter)
	// Output: rate_limited 2s
}
