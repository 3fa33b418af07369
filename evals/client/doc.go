// Package client sends eval requests over HTTP, in the OpenAI, Anthropic or
// Gemini wire format (the llm codecs), to a provider or to a gateway in front
// of it. A [Client] implements evals.Sender; a [Router] picks a client per
// provider.
//
// Through a gateway, each request carries the route and the target in the
// X-Brownout-Route and X-Brownout-Target headers, so a gateway that allows
// hints can pin the target being evaluated. API keys are sent in the
// format's header and never appear in errors.
package client
