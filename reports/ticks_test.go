package reports

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTicksAreRound: every axis ticks at round values — time in 1-2-5
// seconds, 15 s, 30 s, minutes and hours (never 50 s or 1m40s); rates in
// whole numbers (never 12.5/s); percentages, durations and money in 1, 2 or
// 5 times a power of ten — and reaches past the largest value.
func TestTicksAreRound(t *testing.T) {
	labels := func(tk ticks) []string {
		out := make([]string, len(tk.vals))
		for i, v := range tk.vals {
			out[i] = tk.label(v)
		}
		return out
	}
	tests := []struct {
		name string
		tk   ticks
		want []string
	}{
		{"time 2m", timeTicks(120), []string{"0s", "15s", "30s", "45s", "1m", "1m15s", "1m30s", "1m45s", "2m"}},
		{"time 5m", timeTicks(300), []string{"0s", "30s", "1m", "1m30s", "2m", "2m30s", "3m", "3m30s", "4m", "4m30s", "5m"}},
		{"time 6m40s (was 0s/50s/1m40s)", timeTicks(400), []string{"0s", "1m", "2m", "3m", "4m", "5m", "6m"}},
		{"time 40s", timeTicks(40), []string{"0s", "5s", "10s", "15s", "20s", "25s", "30s", "35s", "40s"}},
		{"time 1h", timeTicks(3600), []string{"0s", "10m", "20m", "30m", "40m", "50m", "1h"}},
		{"time 3h", timeTicks(3 * 3600), []string{"0s", "30m", "1h", "1h30m", "2h", "2h30m", "3h"}},
		{"rate 12.5/s peak (was 12.5/s ticks)", rateTicks(50), []string{"0/s", "10/s", "20/s", "30/s", "40/s", "50/s"}},
		{"rate 23/s", rateTicks(23.1), []string{"0/s", "5/s", "10/s", "15/s", "20/s", "25/s"}},
		{"rate below 5/s stays whole", rateTicks(2.4), []string{"0/s", "1/s", "2/s", "3/s"}},
		{"rate of nothing", rateTicks(0), []string{"0/s", "1/s"}},
		{"success near the SLO", percentTicks(0.9875), []string{"98.5%", "99%", "99.5%", "100%"}},
		{"success in an outage", percentTicks(0.1), []string{"0%", "20%", "40%", "60%", "80%", "100%"}},
		{"success all 100%", percentTicks(1), []string{"90%", "92%", "94%", "96%", "98%", "100%"}},
		{"TTFT 4.2s", durationTicks(4.2), []string{"0s", "1s", "2s", "3s", "4s", "5s"}},
		{"TTFT 0.8s", durationTicks(0.8), []string{"0s", "200ms", "400ms", "600ms", "800ms"}},
		{"cost $1.3", moneyTicks(1.3), []string{"$0.0", "$0.5", "$1.0", "$1.5"}},
		{"cost $0.042", moneyTicks(0.042), []string{"$0.00", "$0.01", "$0.02", "$0.03", "$0.04", "$0.05"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, labels(tt.tk)); d != "" {
				t.Errorf("ticks (-want +got):\n%s", d)
			}
		})
	}
}
