// Package responses is the OpenAI Responses API wire format
// (POST /v1/responses): requests with input items, instructions, function
// tools and text.format; response objects with output items; the semantic
// stream events in their order (response.created, response.in_progress,
// response.output_item.added, response.content_part.added,
// response.output_text.delta … response.output_item.done,
// response.completed) and the in-band error event. Errors outside a stream
// are OpenAI's, as llm/openai writes and reads them.
package responses
