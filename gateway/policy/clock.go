package policy

import "time"

// sub is t.Sub(u) (a duration the core reports per attempt and request),
// cheaper for the times a simulator passes. time.Sub subtracts monotonic
// clock readings only when both times carry one; when u carries none it
// subtracts wall clocks, and for times less than 2^33 s apart the result
// cannot overflow, so the check time.Sub makes for that (an Add and an
// Equal) is skipped. Otherwise (the live gateway's times carry readings)
// it is time.Sub.
func sub(t, u time.Time) time.Duration {
	if u == u.Round(0) { // Round(0) strips the reading: u has none
		if ds := t.Unix() - u.Unix(); ds > -1<<33 && ds < 1<<33 {
			return time.Duration(ds)*time.Second + time.Duration(t.Nanosecond()-u.Nanosecond())
		}
	}
	return t.Sub(u)
}
