package yamlfile_test

import (
	"fmt"

	"github.com/brownout-dev/brownout/yamlfile"
)

func ExampleDecode() {
	var cfg struct {
		Timeout yamlfile.Duration `yaml:"timeout"`
	}
	_, err := yamlfile.Decode("gateway.yaml", []byte("timeout: 30s\nretries: 3\n"), &cfg)
	fmt.Println(err)
	// Output:
	// gateway.yaml:2:1: retries: unknown field (one of timeout)
}
