package scenarios

import (
	"fmt"
	"os"

	"github.com/brownout-dev/brownout/gateway"
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

// loadGatewayConfig loads a gateway config file exactly as `brownout serve`
// does (same strict decoding, validation and file:line:col errors), so a game
// day never accepts a file the gateway would refuse. ${NAME} secrets need not
// be set: the simulator never sends them anywhere, and the live engine
// reloads the file with the real environment.
func loadGatewayConfig(path string) (*gateway.Config, error) {
	return gateway.LoadConfig(path, gateway.LoadOptions{LookupEnv: func(name string) (string, bool) {
		if v, ok := os.LookupEnv(name); ok {
			return v, true
		}
		return "unset-" + name, true
	}})
}

// loadGateway reads a gateway config's routes, policy and alert rules.
func loadGateway(path string) (policy.Config, []alerts.Rule, error) {
	g, err := loadGatewayConfig(path)
	if err != nil {
		return policy.Config{}, nil, err
	}
	return g.Config, gatewayRules(g), nil
}

func gatewayRules(g *gateway.Config) []alerts.Rule {
	return append([]alerts.Rule(nil), g.Alerts.InEffect()...)
}
