package schemas_test

import (
	"encoding/json"
	"fmt"

	"github.com/brownout-dev/brownout/schemas"
)

func ExampleGet() {
	b, err := schemas.Get("gateway")
	if err != nil {
		panic(err)
	}
	var s struct {
		Schema string `json:"$schema"`
		Title  string `json:"title"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		panic(err)
	}
	fmt.Println(s.Title)
	fmt.Println(s.Schema)

	_, err = schemas.Get("gamedays")
	fmt.Println(err)
	// Output:
	// brownout gateway config
	// https://json-schema.org/draft/2020-12/schema
	// unknown schema "gamedays" (one of gateway, providers, scenario, suite)
}
