package sdkcheck_test

import (
	"fmt"

	"github.com/brownout-dev/brownout/sdkcheck"
)

// The check runs only on a Node.js at least as new as MinNodeMajor.
func ExampleNodeMajor() {
	major, err := sdkcheck.NodeMajor("v20.20.2\n")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(major, major >= sdkcheck.MinNodeMajor)
	_, err = sdkcheck.NodeMajor("node 20")
	fmt.Println(err)
	// Output:
	// 20 true
	// sdkcheck: node version "node 20": not vMAJOR.MINOR.PATCH
}
