// Package mockprovider is brownout's programmable LLM provider: a pure
// behaviour model plus HTTP servers that speak the OpenAI, Anthropic and
// Gemini wire formats.
//
// # The model
//
// Model is the behaviour of one provider without I/O. Plan(now, req, meta)
// returns a Plan (see package faults): status and headers, time to first
// token and the time of every token, the content, finish reason and usage,
// and the fault steps. Time is an argument and randomness comes from the
// seeded source given to NewModel, so the same seed and the same requests
// give the same plans. The HTTP servers execute a Model's plans on real
// time; the simulator plans on virtual time with a Planner (below).
//
// Planning, in order: the model is looked up (404), an assistant prefill is
// refused by models that do not accept it (400), the prompt plus max_tokens
// must fit the context window (400 context_length_exceeded), capacity admits
// the request or sheds it (429 with Retry-After and the provider's rate-limit
// headers; a concurrency overload is Anthropic's 529 overloaded_error and
// Gemini's 503), then the content and timing are drawn, usage is counted,
// the prompt cache is consulted, and the active faults transform the plan.
//
// Content is deterministic from the seed and the request. Rules and a
// model's steps are what is scripted; a rule matches the last user message
// (contains / regex) and the conversation's state (last_role: user,
// assistant or tool; tool_result: whether a tool result follows the last
// user message; turn: 1 plus the assistant messages), the first match wins.
// A model's steps script the tool loop after each user message: step k
// answers a conversation holding k assistant turns after its last user
// message, so call → result → call → result → answer is
//
//	models:
//	  - name: gpt-4o
//	    steps:
//	      - tool_call: {name: search, arguments: {q: "brownout"}}
//	      - tool_call: {name: fetch_page}   # arguments from its schema
//	      - answer: "Found it: {{tool_result}}"
//
// In order:
//   - with tools offered (and tool_choice not none), a named tool_choice, a
//     matching rule or the current step naming an offered tool, or
//     tool_choice required makes a tool call whose arguments come from the
//     rule or step, or from GenerateJSON over the tool's parameter schema.
//     A rule's tool call without conversation conditions is made once per
//     user message: after its result the rule no longer matches;
//   - a rule's or step's answer ("{{tool_result}}" is the last tool result)
//     is the text (for structured output only if the answer is JSON);
//   - structured output gets JSON satisfying the request's schema
//     (GenerateJSON documents the supported shapes and limits);
//   - a conversation ending with a tool result gets a final text answer
//     that quotes the result, then filler to the sampled length;
//   - otherwise filler text of the sampled output length: a window, starting
//     at a sentence, of a 64 KiB filler corpus the model generates once from
//     its seed (longer answers are drawn with Filler). The window's tokens
//     are the corpus's own, shared read-only by the plans (faults.Plan).
//
// A conversation ending with an assistant message is a prefill: the
// beginning of the answer, which a gateway sends to continue a stream cut
// mid-answer. It is no turn or step. A model with prefill: true answers as
// the conversation without it would be answered (after a tool result, at
// its step, by its rules; a rule with last_role: assistant is the one
// exception, answering as written) and continues from where the prefill
// stops: the rest of that answer when the prefill is its beginning, else
// the prefill's last word finished and filler going on in its sentence. A
// model with prefill: ignore accepts the prefill and answers from scratch,
// as a model that does not take prefill does: a restart with its own
// opening, which a gateway must not glue onto the cut answer. Without
// prefill such a request is a 400.
//
// Any path but the provider's own is answered with a 404 in the shape of
// the API the path belongs to (llm/inbound), so an SDK of another API
// reads it as its own error.
//
// # Token accounting
//
// Output tokens follow faults.Tokenize (at most 4 bytes of UTF-8 each), so
// usage.output_tokens is exactly the number of streamed pieces. Prompt tokens
// (PromptTokens) are 3 for priming, plus 4 per message and per tool, plus the
// text (content, tool-call names and arguments, tool names, descriptions and
// schemas) at 4 bytes per token, plus 85 per image.
//
// The prompt cache (CacheSpec) hashes the prompt at every message boundary;
// the longest prefix seen within the TTL is reported as cached input tokens
// if it reaches MinTokens.
//
// # Capacity
//
// Capacity has max concurrency, requests per minute and tokens per minute
// (prompt plus planned output), for the provider and per model. RPM and TPM
// are token buckets that start full and refill continuously with time passed
// as an argument. Successful answers carry the same rate-limit headers
// (OpenAI x-ratelimit-{limit,remaining,reset}-{requests,tokens}; Anthropic
// anthropic-ratelimit-{requests,tokens,input-tokens}-{limit,remaining,reset}).
//
// # Servers
//
// Server is the plain http.Handler of one provider: OpenAI POST
// /v1/chat/completions, Anthropic POST /v1/messages, Gemini POST
// /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse.
// It decodes the request with the format's codec (llm/openai, llm/anthropic,
// llm/gemini), plans it, and executes the plan on real time with one timer:
// a reset hijacks the connection and closes it with a TCP RST; a hold waits,
// then closes; headers wait for HeaderDelay; every token waits for its time,
// and the response is flushed before each wait, so an event leaves when it
// is due (tokens already due are written together). A cut or a stall that
// closes aborts the connection without the end of the chunked body (no
// finish, no [DONE]); a malformed chunk is a data line that is not JSON; a
// missing end marker omits [DONE] / message_stop. Errors are encoded by the
// codec's EncodeError, so their bodies are the provider's own shape.
//
// Start serves a provider on a real loopback port (StartTest closes it when
// the test ends; StartAll hosts several, as `brownout mock` does).
//
// # Control API
//
// Every provider serves /_mock/ (see newControl's table in control.go and the
// typed client in package control): list, add (JSON or YAML, validated, the
// error naming the field) and remove faults, reset, read the journal and the
// statistics.
//
// # Proxy mode
//
// With ProxyTo the provider forwards requests to a real upstream instead of
// generating answers, and applies the same faults: terminal faults and
// capacity shedding answer without calling the upstream; requests no fault
// selects pass through as they come (streams flushed chunk by chunk);
// streams whose faults all act by token index or time (cut, stall and
// malformed_chunk with an explicit after/at, truncate with at, missing_done,
// ttft add, slow_headers, token_rate) are relayed live, each event delayed
// from its own arrival; other selected requests are buffered, turned into a
// plan (one token per upstream delta, timed by its arrival), transformed and
// executed like a mock plan. Upstream errors pass through unchanged.
//
// # Journal
//
// Every attempt is journaled (JournalEntry) with its x-request-id, prompt
// size, the faults applied, the outcome and the tokens that actually left
// the provider: the ground truth for "a corrupted answer was served as
// success". Entries are stored compactly (no pointers but the request id),
// so a simulated run can journal millions of attempts cheaply.
//
// # Many plans in one process
//
// A Model is safe for concurrent use. A caller that plans very many
// requests from one goroutine, such as the game-day simulator, uses a
// Planner: the same plans (a test holds the two to each other), without
// locking, with the prompts it has seen remembered, planned into memory the
// caller reuses (PlanInto).
package mockprovider
