package control_test

import (
	"context"
	"fmt"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/mockprovider/control"
)

func Example() {
	p, err := mockprovider.Start(mockprovider.ProviderSpec{
		Name: "anthropic", Format: llm.FormatAnthropic,
		Models: []mockprovider.ModelSpec{{Name: "claude-sonnet-4-5"}},
	}, mockprovider.Options{})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	c := control.New(p.URL, nil)
	ctx := context.Background()
	id, err := c.AddFault(ctx, faults.Spec{Kind: faults.KindHTTPError, Status: 529, ID: "overload"})
	if err != nil {
		panic(err)
	}
	active, _ := c.Faults(ctx)
	fmt.Println(id, active[0].Spec.Kind, active[0].Spec.Status)
	_, err = c.AddFault(ctx, faults.Spec{Kind: faults.KindTruncate, Status: 500})
	fmt.Println(err)
	// Output:
	// overload http_error 529
	// mock control: 400: status: does not apply to truncate (its parameters: at)
}
