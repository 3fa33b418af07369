package schemas

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"
)

var (
	//go:embed gateway.schema.json
	gatewaySchema []byte
	//go:embed providers.schema.json
	providersSchema []byte
	//go:embed scenario.schema.json
	scenarioSchema []byte
	//go:embed suite.schema.json
	suiteSchema []byte
)

// ErrUnknown is returned by Get for a name that is not one of Names.
var ErrUnknown = errors.New("unknown schema")

// Gateway returns the JSON Schema of gateway config files
// (`brownout serve -c FILE`).
func Gateway() []byte { return bytes.Clone(gatewaySchema) }

// Providers returns the JSON Schema of mock provider files
// (mockprovider.LoadFile, a scenario's providers.file).
func Providers() []byte { return bytes.Clone(providersSchema) }

// Scenario returns the JSON Schema of game-day scenario files.
func Scenario() []byte { return bytes.Clone(scenarioSchema) }

// Suite returns the JSON Schema of eval suite files; it is the same document
// as evals.SuiteSchema.
func Suite() []byte { return bytes.Clone(suiteSchema) }

// Names returns the names Get accepts, which are also the file names without
// ".schema.json".
func Names() []string { return []string{"gateway", "providers", "scenario", "suite"} }

// Get returns the schema called name (one of Names).
func Get(name string) ([]byte, error) {
	switch name {
	case "gateway":
		return Gateway(), nil
	case "providers":
		return Providers(), nil
	case "scenario":
		return Scenario(), nil
	case "suite":
		return Suite(), nil
	}
	return nil, fmt.Errorf("%w %q (one of %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}
