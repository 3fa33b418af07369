// Package faults is brownout's fault vocabulary: what can go wrong with an
// LLM provider, which requests it hits, and how it changes the provider's
// answer.
//
// A Spec is one fault as written in YAML or posted to a mock's control API:
//
//	{kind: http_error, status: 429, retry_after: 2s, probability: 50%, model: gpt-4o}
//
// Its Kind selects one of the fault kinds (one file each in this package,
// listed by Kinds in the order they apply); its parameters are checked by
// Validate, which names the offending field; its Selector (provider, model
// glob, header match, probability, first N, every Nth, a time window
// relative to activation, a rising ramp) picks the requests it applies to.
//
// Each kind implements Fault: Apply transforms a Plan, the plain-data
// description of what a provider does with a request (status, headers, the
// time of every token, the content, and stream steps such as "cut after 12
// tokens"). Faults never read the clock and never draw from a global random
// source: timing is plan data, randomness comes from the Env's seeded source.
// Kinds that only make sense for some requests (reject_param needs the
// parameter, empty_tool_args needs tools) also implement Matcher.
//
// A Set holds the faults active on one provider. When several select the
// same request they apply in the kinds' table order (rejections, transport
// errors, content, truncation, timing, stream shape), then by activation
// order; once a plan is terminal (an error status, a reset or a hold) the
// later faults are skipped.
//
// Token accounting is documented on Tokenize: a token is at most
// BytesPerToken bytes of UTF-8 text, so usage always matches the content.
package faults
