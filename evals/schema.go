package evals

import _ "embed"

// SuiteSchema is the JSON Schema of suite files, for editors (point the YAML
// language server at it). LoadSuite does not need it: its own validation is
// stricter and reports file:line:col.
//
//go:embed suite.schema.json
var SuiteSchema []byte
