package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/yamlfile"
)

// Secret is a configuration string that may hold a credential. In YAML it is
// written literally or with ${NAME} references to environment variables
// ("${OPENAI_API_KEY}", "Bearer ${TOKEN}"), resolved when the file is loaded.
// A Secret never prints its value: String, MarshalJSON and MarshalYAML all
// write "[redacted]", so logging a config or an error that formats one leaks
// nothing. Value returns the resolved text.
type Secret struct {
	template string // as written in the file
	value    string // resolved
	resolved bool
}

// Redacted is what a Secret prints instead of its value.
const Redacted = "[redacted]"

// NewSecret returns a resolved Secret holding value (for tests and Go callers).
func NewSecret(value string) Secret { return Secret{template: value, value: value, resolved: true} }

// Value returns the resolved text.
func (s Secret) Value() string { return s.value }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.template == "" && s.value == "" }

func (s Secret) String() string {
	if s.IsZero() {
		return ""
	}
	return Redacted
}

// GoString redacts for %#v too.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON writes "[redacted]".
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// MarshalYAML writes the template as written ("${OPENAI_API_KEY}") when it
// references the environment, else "[redacted]".
func (s Secret) MarshalYAML() (any, error) {
	if envRef.MatchString(s.template) {
		return s.template, nil
	}
	return s.String(), nil
}

// UnmarshalYAML keeps the text as written; Load resolves it.
func (s *Secret) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yamlfile.Error{Line: n.Line, Col: n.Column, Msg: "must be a string (use ${NAME} to read an environment variable)"}
	}
	*s = Secret{template: n.Value}
	return nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${NAME} references using lookup. A reference to an unset
// variable is an error naming the variable (never its value).
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if strings.Contains(envRef.ReplaceAllString(s, ""), "${") {
		return "", fmt.Errorf("malformed ${...} reference (write ${NAME}: letters, digits and _)")
	}
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// Resolve expands the ${NAME} references of the text as written with lookup
// (nil: os.LookupEnv). An unset variable is an error naming the variable,
// never a value. LoadConfig resolves a config's secrets; Resolve serves
// other files that hold secrets (a game day's request headers).
func (s *Secret) Resolve(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return s.resolve(lookup)
}

func (s *Secret) resolve(lookup func(string) (string, bool)) error {
	v, err := expand(s.template, lookup)
	if err != nil {
		return err
	}
	s.value, s.resolved = v, true
	return nil
}
