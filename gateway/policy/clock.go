package policy

import "time"

// sub is t.Sub(u) (a duration the core reports per attempt and request),
// cheaper for the times a simulator passes: without monotonic clock
// readings and less than 2^33 s apart, the difference cannot overflow, so
// the check time.Sub makes for that (an Add and an Equal) is skipped.
// Times with a monotonic reading (the live gateway's) go to time.Sub, which
// subtracts the readings.
func sub(t, u time.Time) time.Duration {
	if t == t.Round(0) && u == u.Round(0) { // Round(0) strips the reading
		if ds := t.Unix() - u.Unix(); ds > -1<<33 && ds < 1<<33 {
			return time.Duration(ds)*time.Second + time.Duration(t.Nanosecond()-u.Nanosecond())
		}
	}
	return t.Sub(u)
}
