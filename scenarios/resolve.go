package scenarios

import (
	"errors"

	"gopkg.in/yaml.v3"

	"fmt"

	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// providerInfo is one mock provider of the scenario.
type providerInfo struct {
	name   string
	models []string
	spec   mockprovider.ProviderSpec
}

func (s *Scenario) loadProviders() ([]providerInfo, error) {
	var specs []mockprovider.ProviderSpec
	if s.Providers.File != "" {
		ps, err := mockprovider.LoadFile(s.rel(s.Providers.File))
		if err != nil {
			return nil, err
		}
		specs = ps
	} else {
		var es yamlfile.Errors
		for i := range s.Providers.Inline {
			p := &s.Providers.Inline[i]
			if err := p.Validate(); err != nil {
				path := fmt.Sprintf("providers.inline.%d", i)
				es = append(es, s.doc.Errorf(path, "%v", err))
			}
		}
		if len(es) > 0 {
			return nil, es
		}
		specs = s.Providers.Inline
	}
	out := make([]providerInfo, 0, len(specs))
	for _, p := range specs {
		pi := providerInfo{name: p.Name, spec: p}
		for _, m := range p.Models {
			pi.models = append(pi.models, m.Name)
		}
		out = append(out, pi)
	}
	return out, nil
}

// gatewayFile is the part of a gateway config file the simulator needs: the
// decision core's routes and policy, and the alert rules. The other sections
// belong to the HTTP shell and are accepted as they are (the live engine
// hands the whole file to package gateway, which validates them).
type gatewayFile struct {
	Version     int           `yaml:"version"`
	Listen      yaml.Node     `yaml:"listen"`
	Admin       yaml.Node     `yaml:"admin"`
	Providers   yaml.Node     `yaml:"providers"`
	Usage       yaml.Node     `yaml:"usage"`
	Cache       yaml.Node     `yaml:"cache"`
	Idempotency yaml.Node     `yaml:"idempotency"`
	Reload      yaml.Node     `yaml:"reload"`
	Shutdown    yaml.Node     `yaml:"shutdown"`
	Seed        yaml.Node     `yaml:"seed"`
	Detectors   yaml.Node     `yaml:"detectors"`
	Evals       yaml.Node     `yaml:"evals"`
	Probes      yaml.Node     `yaml:"probes"`
	Alerts      gatewayAlerts `yaml:"alerts"`

	policy.Config `yaml:",inline"`
}

type gatewayAlerts struct {
	EvaluateEvery yamlfile.Duration `yaml:"evaluate_every"`
	Rules         []alerts.Rule     `yaml:"rules"`
	Defaults      bool              `yaml:"defaults"`
	Sinks         yaml.Node         `yaml:"sinks"`
}

// loadGateway reads a gateway config's routes, policy and alert rules.
func loadGateway(path string) (policy.Config, []alerts.Rule, error) {
	g, err := loadGatewayConfig(path)
	if err != nil {
		return policy.Config{}, nil, err
	}
	return g.Config, gatewayRules(g), nil
}

func loadGatewayConfig(path string) (*gatewayFile, error) {
	var g gatewayFile
	doc, err := yamlfile.ReadFile(path, &g)
	if err != nil {
		return nil, err
	}
	var es yamlfile.Errors
	if g.Version != 1 {
		es = append(es, doc.Errorf("version", "must be 1 (got %d)", g.Version))
	}
	if err := g.Config.Validate(); err != nil {
		var pe policy.Errors
		if errors.As(err, &pe) {
			for _, fe := range pe {
				es = append(es, doc.Errorf(fe.Field, "%s", fe.Msg))
			}
		} else {
			es = append(es, doc.Errorf("routes", "%v", err))
		}
	}
	for i, r := range g.Alerts.Rules {
		if err := r.Validate(); err != nil {
			es = append(es, doc.Errorf(fmt.Sprintf("alerts.rules.%d", i), "%v", err))
		}
	}
	if len(es) > 0 {
		return nil, es
	}
	return &g, nil
}

func gatewayRules(g *gatewayFile) []alerts.Rule {
	rules := append([]alerts.Rule(nil), g.Alerts.Rules...)
	if g.Alerts.Defaults {
		rules = append(rules, alerts.DefaultRules()...)
	}
	return rules
}

// sinks returns the names and kinds of the gateway's alert sinks.
func (g *gatewayFile) sinks() []Sink {
	var raw []struct {
		Name string `yaml:"name"`
		Kind string `yaml:"kind"`
	}
	if g.Alerts.Sinks.Kind == 0 || g.Alerts.Sinks.Decode(&raw) != nil {
		return nil
	}
	out := make([]Sink, 0, len(raw))
	for _, k := range raw {
		if k.Name != "" && (k.Kind == "webhook" || k.Kind == "log") {
			out = append(out, Sink{Name: k.Name, Kind: k.Kind})
		}
	}
	return out
}
