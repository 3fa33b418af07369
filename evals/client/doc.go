// Package client sends eval requests over HTTP, in the OpenAI, Anthropic or
// Gemini wire format (the llm codecs), to a provider or to a gateway in front
// of it. A [Client] implements evals.Sender; a [Router] picks a client per
// provider.
//
// Straight to a provider, the request's model is the target's model.
// Through a brownout gateway (Endpoint.Gateway), the model is the route and
// the X-Brownout-Hint header pins the target under evaluation (the route
// must allow hints); an answer the gateway served from another target, as
// its X-Brownout-Target response header says, is [ErrWrongTarget]. API keys
// are sent in the format's header and never appear in errors.
package client
