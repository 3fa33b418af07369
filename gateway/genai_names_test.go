package gateway

import "testing"

// TestGenAIProviderName: gen_ai.provider.name follows the semantic
// conventions' well-known values by kind, and by host for the
// OpenAI-compatible APIs they name; a local server is openai_compatible,
// and a provider the configuration does not name is unknown.
func TestGenAIProviderName(t *testing.T) {
	cases := []struct {
		kind ProviderKind
		url  string
		want string
	}{
		{KindOpenAI, "", "openai"},
		{KindAnthropic, "http://127.0.0.1:9101", "anthropic"},
		{KindGemini, "", "gcp.gemini"},
		{KindAzure, "https://acme.openai.azure.com", "azure.ai.openai"},
		{KindOpenAICompatible, "https://api.groq.com/openai/v1", "groq"},
		{KindOpenAICompatible, "https://API.Mistral.AI/v1", "mistral_ai"},
		{KindOpenAICompatible, "https://api.deepseek.com", "deepseek"},
		{KindOpenAICompatible, "http://127.0.0.1:8000/v1", "openai_compatible"},
	}
	for _, c := range cases {
		if got := genaiProviderName(c.kind, c.url); got != c.want {
			t.Errorf("genaiProviderName(%s, %q) = %q, want %q", c.kind, c.url, got, c.want)
		}
	}
	l := newLabelSet(&Config{Providers: []Provider{{Name: "primary", Kind: KindAnthropic}}})
	if got := l.genaiProvider("primary"); got != "anthropic" {
		t.Errorf("configured provider: %q", got)
	}
	if got := l.genaiProvider("gone"); got != labelUnknown {
		t.Errorf("unconfigured provider: %q, want %q", got, labelUnknown)
	}
}
