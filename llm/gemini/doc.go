// Package gemini is the Gemini API's generateContent wire format
// (generativelanguage.googleapis.com/v1beta): requests, responses, errors and
// streamGenerateContent?alt=sse streams, to and from the normalized model of
// package llm. [Codec] implements [llm.Codec]; the official Go SDK,
// google.golang.org/genai, is its test client.
//
// # The model is in the URL
//
// Gemini puts the model and the stream mode in the path, not the body:
// POST /v1beta/models/{model}:generateContent and
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse. A server reads
// them with [ParsePath] and sets Request.Model and Request.Stream itself;
// DecodeRequest leaves both unset. A client builds the URL with [Path];
// EncodeRequest ignores both.
//
// # Mapping
//
//   - contents with role "user" become user messages, role "model" assistant
//     messages; systemInstruction is a leading system message. text,
//     inlineData (base64) and fileData parts map to text and image parts
//     (image parts carry any MIME type).
//   - functionCall parts are tool calls. Gemini function calls usually have no
//     id: the decoders give the N-th call of a request, response or stream the
//     id "call_N" (N from 0), and the encoders do not write ids of that form,
//     so a Gemini body survives a decode-encode round trip. Other ids (an
//     OpenAI "call_abc…", a newer Gemini id) are written to functionCall.id and
//     functionResponse.id.
//   - functionResponse parts are tool messages (RoleTool, Name and
//     ToolCallID). The response object is the message's text; a tool result
//     that is not a JSON object is sent as {"output": text}, an error result as
//     {"error": text}, and both are read back to the bare text.
//   - tools are functionDeclarations; toolConfig.functionCallingConfig modes
//     AUTO, NONE and ANY (with at most one allowedFunctionNames entry, a forced
//     tool) are tool choices. Schemas are written as JSON Schema
//     (parametersJsonSchema, responseJsonSchema); Gemini's OpenAPI-style
//     parameters and responseSchema are read and converted to JSON Schema.
//   - generationConfig maxOutputTokens, temperature, topP, topK, seed,
//     stopSequences and responseMimeType/schema are modelled; Gemini's other
//     generationConfig fields (thinkingConfig, candidateCount, ...) travel in
//     Request.Extra as "generationConfig.<field>", and safetySettings and
//     cachedContent as themselves. Unknown fields are a 400, as at Google.
//   - finishReason STOP is stop (tool_calls when the candidate calls
//     functions), MAX_TOKENS is length, SAFETY and the other blocking reasons
//     are content_filter, the rest error. usageMetadata maps to Usage with
//     OutputTokens = candidatesTokenCount + thoughtsTokenCount.
//   - errors are Google's {"error":{"code","message","status","details"}};
//     Retry-After travels in a google.rpc.RetryInfo detail.
//
// A request field Gemini knows but the normalized model does not
// (thoughtSignature, server-side tools, ...) is a 400 naming the field
// ("contents[1].parts[0].thoughtSignature"), never silently dropped; a
// normalized feature Gemini cannot express is an *llm.UnsupportedError.
package gemini
