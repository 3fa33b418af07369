// Package llm is brownout's normalized chat model: requests with messages,
// content parts, tools and structured-output formats; responses with content,
// tool calls, finish reasons and usage; stream events; and provider errors.
//
// The wire formats live in sub-packages (llm/openai, llm/anthropic,
// llm/gemini, llm/responses), each exporting a [Codec] that also words its
// provider's errors ([Wording]); llm/codecs is the one table of them by
// format; llm/sse reads and writes server-sent events. Translating between two formats is decoding with one codec and
// encoding with the other: a feature the target cannot express is an
// [*UnsupportedError], never a silent drop. [Translate] does the encoding
// half and refuses fields that only the source format knows (Request.Extra).
//
// This package performs no I/O and does not link net/http, so the gateway's
// decision core can use its types.
package llm
