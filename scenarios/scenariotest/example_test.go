package scenariotest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/scenarios/scenariotest"
)

// printTB stands in for *testing.T: it prints the first line of a failure.
type printTB struct{}

func (printTB) Helper()                  {}
func (printTB) Context() context.Context { return context.Background() }
func (printTB) Fatalf(format string, args ...any) {
	first, _, _ := strings.Cut(fmt.Sprintf(format, args...), "\n")
	fmt.Println(first)
}

func ExampleRun() {
	// In a test: scenariotest.Run(t, "gamedays/primary-429-storm.yaml", scenarios.Options{})
	res := scenariotest.Run(printTB{}, "../testdata/short.yaml", scenarios.Options{})
	fmt.Println(res.Pass)
	scenariotest.Run(printTB{}, "../testdata/failing.yaml", scenarios.Options{})
	// Output:
	// true
	// game day failing failed its expectations:
}
