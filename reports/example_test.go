package reports_test

import (
	"os"
	"time"

	"github.com/brownout-dev/brownout/reports"
	"github.com/brownout-dev/brownout/scenarios/score"
)

func ExampleWriteJUnit() {
	r := &score.Result{
		Scenario: "primary-429-storm", Mode: score.ModeSim, Seed: 42, Elapsed: 10 * time.Minute,
		Expectations: []score.Verdict{
			{Name: "ttd", Step: "openai-429", Want: "<= 30s", Got: "4.2s", Pass: true},
			{Name: "flaps", Want: "<= 0", Got: "2", Pass: false},
		},
	}
	_ = reports.WriteJUnit(os.Stdout, r)
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <testsuites name="brownout" tests="2" failures="1" errors="0" time="600.000">
	//   <testsuite name="gameday.primary-429-storm" tests="2" failures="1" errors="0" skipped="0" time="600.000">
	//     <properties>
	//       <property name="mode" value="sim"></property>
	//       <property name="seed" value="42"></property>
	//     </properties>
	//     <testcase name="ttd [openai-429]" classname="gameday.primary-429-storm" time="0"></testcase>
	//     <testcase name="flaps" classname="gameday.primary-429-storm" time="0">
	//       <failure message="want &lt;= 0, got 2" type="expectation">flaps: want &lt;= 0, got 2</failure>
	//     </testcase>
	//   </testsuite>
	// </testsuites>
}
