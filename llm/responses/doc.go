// Package responses is the OpenAI Responses API wire format
// (POST /v1/responses): requests with input items, instructions, function
// tools and text.format; response objects with output items; the semantic
// stream events in their order (response.created, response.in_progress,
// response.output_item.added, response.content_part.added,
// response.output_text.delta … response.output_item.done,
// response.completed) and the in-band error event. Errors outside a stream
// are OpenAI's, as llm/openai writes and reads them.
//
// What it writes matches the API field by field, as the official SDKs and
// frameworks parse it (golden files in testdata/golden hold it): every
// output_text part has its annotations and logprobs arrays, a message item
// is announced with "content": [], an incomplete response's last item is
// incomplete too, usage carries its token details, and ids have the API's
// shapes (ResponseID: an upstream's chatcmpl-… or msg_… id becomes resp_
// and 48 hex digits; items are msg_…, fc_…; a call without an id gets
// call_…). A request continuing a stored response (previous_response_id)
// is refused by DecodeRequest with the API's own 400; DecodeContinuation
// hands the id to a caller that keeps responses.
package responses
