// Package scenariotest is the game-day runner's helper for go test suites:
// run a scenario and fail the test with the scorecard when an expectation
// does not hold; play a seed sweep and require a pass rate; look scores up
// by name, step and target (Time, Number, SweepScore).
//
//	func TestPrimary429Storm(t *testing.T) {
//		scenariotest.Run(t, "testdata/primary-429-storm.yaml", scenarios.Options{})
//	}
package scenariotest
