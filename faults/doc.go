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
// The kinds and their parameters (YAML names; defaults in parentheses):
//
//	auth_failure            message                       401 as for an expired key
//	reject_param            param (temperature), message  400 naming the parameter; only requests carrying it
//	context_length          window (0: all), message      400 context_length_exceeded
//	http_error              status (500), retry_after, message, error_type, after
//	                                                      provider-shaped error; with after, in-band mid-stream
//	reset                   -                             connection closed before headers (TCP RST)
//	no_response             for                           hold the connection, then close it
//	refusal                 text                          the answer becomes a refusal (looks like success)
//	content_filter          stage (output), after (0), message
//	                                                      finish_reason content_filter, or a 400 for stage prompt
//	quality_drop            -                             degenerate text / blanked JSON of the same shape
//	malformed_json_content  -                             structured output that does not parse
//	empty_tool_args         -                             tool calls with "{}" arguments
//	truncate                at (a power of two)           finish_reason length at exactly at tokens
//	token_rate              rate, jitter                  re-pace tokens at rate per second
//	ttft                    delay, mode (add | set)       move the first token (a Latency distribution)
//	slow_headers            delay                         delay the response headers
//	stall                   after (half), for, close      pause mid-stream, then resume or close
//	cut                     after (half)                  close mid-answer: no finish, no [DONE]
//	malformed_chunk         at (half)                     one event that is not JSON
//	missing_done            -                             no [DONE] / message_stop
//
// Selector fields, valid on every kind: provider, model (glob), header
// (name: value, "*" for present), probability, first, every, start,
// duration, ramp {from, to, over}.
//
// Token accounting is documented on Tokenize: a token is at most
// BytesPerToken bytes of UTF-8 text, so usage always matches the content.
package faults
