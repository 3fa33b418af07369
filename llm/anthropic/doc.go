// Package anthropic is the Anthropic Messages wire format (POST /v1/messages)
// as an [llm.Codec]: requests, responses, provider errors and the streaming
// events, both ways, byte-compatible with what the official SDKs send and
// accept.
//
// Mapping to the normalized model:
//
//   - The top-level system prompt (a string or text blocks) is one
//     llm.RoleSystem message at the start of Messages; a system message
//     anywhere else cannot be encoded.
//   - tool_result blocks in a user turn are llm.RoleTool messages, one per
//     block, named after the tool_use they answer; on encode, consecutive tool
//     messages (and a user message right after them) share one user turn.
//   - tool_choice any is llm.ToolChoiceRequired; disable_parallel_tool_use is
//     ToolChoice.DisableParallel. output_config.format (structured outputs) is
//     a json_schema ResponseFormat.
//   - max_tokens is required: a request without it is a 400 naming the field;
//     encoding a request with MaxTokens 0 writes [DefaultMaxTokens].
//   - Usage: Anthropic's input_tokens excludes cache reads and writes, while
//     llm.Usage.InputTokens includes them; the codec adds and subtracts
//     cache_read_input_tokens and cache_creation_input_tokens accordingly.
//   - stop_reason end_turn, stop_sequence and pause_turn are stop, max_tokens
//     is length, tool_use is tool_calls, refusal is content_filter (see
//     [FinishReason] and [StopReason]).
//   - Errors are {"type":"error","error":{"type","message"}} with the
//     documented statuses (overloaded_error is 529); "prompt is too long" is
//     llm.ErrContextLength. Retry hints come from retry-after-ms, Retry-After
//     and the anthropic-ratelimit-* headers ([ParseRateLimits]).
//
// API versions: requests and responses have the same shapes under
// anthropic-version 2023-06-01 and 2026-10-21 (what SDK v2 sends), except
// that 2026-10-21 rejects temperature, top_p and top_k; set [Codec.Version]
// to have EncodeRequest refuse them for that version.
//
// Top-level request fields the model does not know (thinking, service_tier,
// container...) travel in Request.Extra and are written back verbatim.
// Content blocks it cannot carry (thinking, documents, server tools) are a
// 400 on decode rather than a silent drop.
package anthropic
