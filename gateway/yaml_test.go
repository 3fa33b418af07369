package gateway_test

import "github.com/brownout-dev/brownout/yamlfile"

func decodeYAML(b []byte, v any) error {
	_, err := yamlfile.Decode("fault.yaml", b, v)
	return err
}
