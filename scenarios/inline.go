package scenarios

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/llm"
)

// inlineGatewayFile builds the gateway file of a scenario whose gateway is
// declared inline (gateway: {routes, policy}), for the live engine's
// in-process gateway: the routes and policy exactly as the scenario writes
// them, and one provider per mock of the providers file (the live engine
// points each at its mock's port). Everything else keeps the gateway's
// defaults, as the simulator's inline gateway does.
func (s *Scenario) inlineGatewayFile() ([]byte, error) {
	gw := mappingValue(s.doc.Root, "gateway")
	if gw == nil {
		return nil, fmt.Errorf("%s: no inline gateway", s.file)
	}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
	root := &yaml.Node{Kind: yaml.MappingNode}
	root.Content = append(root.Content, str("version"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"})
	provs := &yaml.Node{Kind: yaml.SequenceNode}
	for _, p := range s.env.providers {
		kind := gateway.KindOpenAI
		switch p.spec.Format {
		case llm.FormatAnthropic:
			kind = gateway.KindAnthropic
		case llm.FormatGemini:
			kind = gateway.KindGemini
		}
		provs.Content = append(provs.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			str("name"), str(p.name), str("kind"), str(string(kind)),
			str("base_url"), str("http://127.0.0.1:1"), // the mock's port replaces it
			str("api_key"), str("game-day-placeholder"),
		}})
	}
	root.Content = append(root.Content, str("providers"), provs)
	for i := 0; i+1 < len(gw.Content); i += 2 {
		switch gw.Content[i].Value {
		case "routes", "policy":
			root.Content = append(root.Content, gw.Content[i], gw.Content[i+1])
		}
	}
	return yaml.Marshal(root)
}

// mappingValue returns the value of key in mapping node m, nil when absent.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
