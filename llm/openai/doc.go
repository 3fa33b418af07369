// Package openai is the OpenAI Chat Completions wire format
// (POST /v1/chat/completions): requests, responses, error bodies and the
// chat.completion.chunk stream, both ways, as an [llm.Codec].
//
// Decoding is strict where the API is strict — a malformed request is the
// *llm.Error (400, invalid_request_error) OpenAI would send, with Param naming
// the field ("messages[2].content") — and lossless where it can be: top-level
// fields the normalized model does not know land in Request.Extra and are
// written back verbatim. Encoding refuses, with an *llm.UnsupportedError,
// anything the format cannot carry (top_k, an error flag on a tool result,
// images in system or tool messages, a finish reason of "error").
//
// A few mappings are worth knowing:
//   - the "developer" role decodes as llm.RoleSystem; encoding writes "system";
//   - max_tokens and max_completion_tokens both decode to MaxTokens; encoding
//     writes max_completion_tokens, the field current models accept;
//   - parallel_tool_calls=false is ToolChoice.DisableParallel; when the request
//     has tools but no tool_choice, ToolChoice.Mode is auto (OpenAI's default
//     with tools); without tools the flag has no effect and is not kept;
//   - an assistant refusal (message refusal, refusal parts, delta.refusal) is
//     Response.Refusal in a complete response and a text delta in a stream;
//   - image detail ("low", "high") and a json_schema response format's
//     description are not modeled and are dropped on decode;
//   - a tool message's name comes from the assistant tool call it answers
//     (formats such as Gemini need it); encoding never writes it.
//
// Streams follow the API: a first chunk with the assistant role, content and
// tool-call deltas, a chunk with the finish reason, an optional usage chunk
// with no choices (stream_options.include_usage), then "data: [DONE]". The
// decoder tolerates a missing [DONE] after a finish reason and reports a
// stream cut before any finish as io.ErrUnexpectedEOF.
package openai
