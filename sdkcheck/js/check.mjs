// Drives the real JavaScript clients against brownout's mock providers and
// gateway, and prints one JSON line per check:
//   {"client":"openai","check":"responses.stream helper","target":"gateway","ok":true,"ms":12}
// TestJavaScriptClients (sdkcheck/js_test.go) starts the mocks and the
// gateway on loopback ports, runs this script with their URLs in the
// environment, and fails on any line with ok:false (or a missing line).
//
// Environment:
//   BROWNOUT_GATEWAY     the gateway's base URL (route "chat")
//   BROWNOUT_OPENAI      an OpenAI Chat Completions mock (model gpt-4o)
//   BROWNOUT_RESPONSES   an OpenAI Responses mock (model gpt-4o)
//   BROWNOUT_ANTHROPIC   an Anthropic mock (model claude-sonnet)
//   BROWNOUT_GEMINI      a Gemini mock (model gemini-flash)
//   BROWNOUT_PHASE       "healthy" (every target, mocks and gateway) or
//                        "failing" (the gateway only: its primary cuts
//                        every stream mid-answer)
//   BROWNOUT_ONLY        optional: run only checks whose client matches
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { generateText, generateObject, streamText, tool as aiTool, stepCountIs } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { Agent, Runner, OpenAIProvider, tool as agentTool, setTracingDisabled } from "@openai/agents";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";

const env = process.env;
const phase = env.BROWNOUT_PHASE || "healthy";
const only = env.BROWNOUT_ONLY || "";
const key = "client-key";
const checkTimeoutMs = 20000;

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// Targets: where each API is served, and the model name to ask for there.
const gw = { name: "gateway", url: env.BROWNOUT_GATEWAY };
const targets = {
  chat: [{ name: "mock", url: env.BROWNOUT_OPENAI, model: "gpt-4o" }, { ...gw, model: "chat" }],
  responses: [{ name: "mock", url: env.BROWNOUT_RESPONSES, model: "gpt-4o" }, { ...gw, model: "chat" }],
  anthropic: [{ name: "mock", url: env.BROWNOUT_ANTHROPIC, model: "claude-sonnet" }, { ...gw, model: "chat" }],
  gemini: [{ name: "mock", url: env.BROWNOUT_GEMINI, model: "gemini-flash" }, { ...gw, model: "chat" }],
};

const checks = [];
function check(client, api, name, fn, { gatewayOnly = false } = {}) {
  for (const t of targets[api]) {
    if (!t.url) continue;
    if ((phase === "failing" || gatewayOnly) && t.name !== "gateway") continue;
    checks.push({ client, check: name, target: t.name, fn: () => fn(t) });
  }
}

// The scripted tool loop the mocks answer: three tool calls, then an answer.
const loopTools = ["find_city", "get_weather", "get_time"];
const toolResult = (name) => `${name} says ok`;

// ---- openai (Chat Completions and Responses) ----
const openaiAt = (t) => new OpenAI({ baseURL: t.url + "/v1", apiKey: key, maxRetries: 0 });

check("openai", "chat", "chat.completions.create", async (t) => {
  const r = await openaiAt(t).chat.completions.create({ model: t.model, messages: [{ role: "user", content: "hello" }] });
  assert(r.id.startsWith("chatcmpl-"), `id ${r.id}`);
  assert(r.choices[0].message.content.length > 0, "empty answer");
  assert(r.choices[0].finish_reason === "stop", `finish_reason ${r.choices[0].finish_reason}`);
});

check("openai", "chat", "chat.completions.stream helper", async (t) => {
  const s = openaiAt(t).chat.completions.stream({ model: t.model, messages: [{ role: "user", content: "hello" }], stream_options: { include_usage: true } });
  let text = "";
  s.on("content", (d) => (text += d));
  const c = await s.finalChatCompletion();
  assert(text.length > 20, `streamed text ${JSON.stringify(text)}`);
  assert(c.choices[0].message.content === text, "final message differs from the deltas");
  assert(c.usage && c.usage.completion_tokens > 0, "no usage");
});

check("openai", "chat", "runTools tool loop (streamed)", async (t) => {
  const runner = openaiAt(t).chat.completions.runTools({
    model: t.model,
    stream: true,
    messages: [{ role: "user", content: "What time is it in the capital of France?" }],
    tools: loopTools.map((name) => ({
      type: "function",
      function: { name, function: async () => toolResult(name), parse: JSON.parse, parameters: { type: "object", properties: { city: { type: "string" } } } },
    })),
  });
  const text = await runner.finalContent();
  assert(text?.includes("get_time"), `final content ${JSON.stringify(text)}`);
});

check("openai", "responses", "responses.create", async (t) => {
  const r = await openaiAt(t).responses.create({ model: t.model, input: "hello" });
  assert(/^resp_[0-9a-zA-Z]+$/.test(r.id), `id ${r.id}`);
  assert(r.status === "completed", `status ${r.status}`);
  const msg = r.output.find((o) => o.type === "message");
  assert(msg && /^msg_/.test(msg.id), `message item ${JSON.stringify(msg)}`);
  assert(Array.isArray(msg.content[0].annotations), "output_text without annotations");
  assert(r.output_text.length > 0, "empty output_text");
  assert(r.usage.input_tokens_details && r.usage.output_tokens_details, "usage details");
});

check("openai", "responses", "responses.create max_output_tokens", async (t) => {
  const r = await openaiAt(t).responses.create({ model: t.model, input: "tell me a long story", max_output_tokens: 16 });
  assert(r.status === "incomplete", `status ${r.status}`);
  assert(r.incomplete_details?.reason === "max_output_tokens", JSON.stringify(r.incomplete_details));
  const msg = r.output.find((o) => o.type === "message");
  assert(msg.status === "incomplete", `message status ${msg.status}`);
});

check("openai", "responses", "responses.stream helper", async (t) => {
  const s = openaiAt(t).responses.stream({ model: t.model, input: "hello" });
  let text = "";
  s.on("response.output_text.delta", (e) => (text += e.delta));
  const r = await s.finalResponse();
  assert(text.length > 20, `streamed text ${JSON.stringify(text)}`);
  assert(r.output_text === text, "final response differs from the deltas");
  assert(r.status === "completed", `status ${r.status}`);
});

check("openai", "responses", "responses.create stream", async (t) => {
  const s = await openaiAt(t).responses.create({ model: t.model, input: "hello", stream: true });
  const types = [];
  let done;
  for await (const e of s) {
    types.push(e.type);
    if (e.type === "response.output_item.added" && e.item.type === "message") assert(Array.isArray(e.item.content), "added message without content");
    if (e.type === "response.completed") done = e.response;
  }
  assert(types[0] === "response.created", `first event ${types[0]}`);
  assert(done, "no response.completed");
  assert(Array.isArray(done.output[0].content[0].annotations), "completed without annotations");
});

check("openai", "responses", "responses tool call", async (t) => {
  const r = await openaiAt(t).responses.create({
    model: t.model,
    input: "What is the weather in Paris?",
    tools: loopTools.map((name) => ({ type: "function", name, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, strict: false })),
  });
  const fc = r.output.find((o) => o.type === "function_call");
  assert(fc?.name === "find_city", `function call ${JSON.stringify(fc)}`);
  assert(fc, "no function_call item");
  assert(/^fc_/.test(fc.id) && /^call_/.test(fc.call_id), `ids ${fc.id} ${fc.call_id}`);
  JSON.parse(fc.arguments);
});

check("openai", "responses", "previous_response_id refused", async (t) => {
  try {
    await openaiAt(t).responses.create({ model: t.model, input: "and then?", previous_response_id: "resp_unknown" });
  } catch (e) {
    assert(e instanceof OpenAI.BadRequestError, `error ${e}`);
    assert(e.param === "previous_response_id", `param ${e.param}`);
    return;
  }
  throw new Error("answered without the earlier turns");
});

check("openai", "responses", "previous_response_id continued", async (t) => {
  const c = openaiAt(t);
  const first = await c.responses.create({ model: t.model, input: "My name is Ada. ".repeat(20) });
  const fresh = await c.responses.create({ model: t.model, input: "What is my name?" });
  const next = await c.responses.create({ model: t.model, input: "What is my name?", previous_response_id: first.id });
  assert(next.output_text.length > 0, "empty answer");
  assert(next.usage.input_tokens > fresh.usage.input_tokens + 20, `input tokens ${next.usage.input_tokens} vs ${fresh.usage.input_tokens} without the earlier turns`);
}, { gatewayOnly: true });

// ---- @anthropic-ai/sdk ----
const anthropicAt = (t) => new Anthropic({ baseURL: t.url, apiKey: key, maxRetries: 0 });

check("anthropic", "anthropic", "messages.create", async (t) => {
  const m = await anthropicAt(t).messages.create({ model: t.model, max_tokens: 256, messages: [{ role: "user", content: "hello" }] });
  assert(m.id.startsWith("msg_"), `id ${m.id}`);
  assert(m.content[0].type === "text" && m.content[0].text.length > 0, "empty answer");
  assert(m.stop_reason === "end_turn", `stop_reason ${m.stop_reason}`);
});

check("anthropic", "anthropic", "messages.stream helper", async (t) => {
  const s = anthropicAt(t).messages.stream({ model: t.model, max_tokens: 256, messages: [{ role: "user", content: "hello" }] });
  let text = "";
  s.on("text", (d) => (text += d));
  const m = await s.finalMessage();
  assert(text.length > 20, `streamed text ${JSON.stringify(text)}`);
  assert(m.content[0].text === text, "final message differs from the deltas");
  assert(m.usage.output_tokens > 0, "no usage");
});

check("anthropic", "anthropic", "tool loop", async (t) => {
  const c = anthropicAt(t);
  const tools = loopTools.map((name) => ({ name, input_schema: { type: "object", properties: { city: { type: "string" } } } }));
  const messages = [{ role: "user", content: "What time is it in the capital of France?" }];
  for (let step = 0; step < 6; step++) {
    const m = await c.messages.create({ model: t.model, max_tokens: 512, messages, tools });
    if (m.stop_reason !== "tool_use") {
      assert(m.content.find((b) => b.type === "text")?.text.includes("get_time"), "the answer quotes the last tool result");
      return;
    }
    messages.push({ role: "assistant", content: m.content });
    messages.push({ role: "user", content: m.content.filter((b) => b.type === "tool_use").map((b) => ({ type: "tool_result", tool_use_id: b.id, content: toolResult(b.name) })) });
  }
  throw new Error("no answer after 6 steps");
});

// Extended thinking on a route whose primary speaks Chat Completions: the
// gateway skips the primary (it cannot honour thinking) and the Anthropic
// equivalent serves; with best effort, the primary serves and the response
// names what was dropped.
check("anthropic", "anthropic", "thinking never dropped silently", async (t) => {
  const body = { model: t.model, max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "think first" }] };
  const { data, response } = await anthropicAt(t).messages.create(body).withResponse();
  assert(data.content.length > 0, "empty answer");
  assert(response.headers.get("x-brownout-target") === "beta:claude-sonnet", `served by ${response.headers.get("x-brownout-target")}`);
  assert(!response.headers.get("x-brownout-dropped"), "dropped without opting in");
  if (phase !== "healthy") return;
  const best = await anthropicAt(t).messages.create(body, { headers: { "X-Brownout-Best-Effort": "drop" } }).withResponse();
  assert(best.response.headers.get("x-brownout-target") === "alpha:gpt-4o", `best effort served by ${best.response.headers.get("x-brownout-target")}`);
  assert(best.response.headers.get("x-brownout-dropped") === "thinking", `dropped ${best.response.headers.get("x-brownout-dropped")}`);
}, { gatewayOnly: true });

check("anthropic", "anthropic", "stream helper tool loop", async (t) => {
  const c = anthropicAt(t);
  const tools = loopTools.map((name) => ({ name, input_schema: { type: "object", properties: { city: { type: "string" } } } }));
  const messages = [{ role: "user", content: "What time is it in the capital of France?" }];
  for (let step = 0; step < 6; step++) {
    const m = await c.messages.stream({ model: t.model, max_tokens: 512, messages, tools }).finalMessage();
    if (m.stop_reason !== "tool_use") {
      assert(m.content.find((b) => b.type === "text")?.text.includes("get_time"), "the answer quotes the last tool result");
      return;
    }
    const uses = m.content.filter((b) => b.type === "tool_use");
    assert(uses.every((b) => typeof b.input === "object"), `tool inputs ${JSON.stringify(uses)}`);
    messages.push({ role: "assistant", content: m.content });
    messages.push({ role: "user", content: uses.map((b) => ({ type: "tool_result", tool_use_id: b.id, content: toolResult(b.name) })) });
  }
  throw new Error("no answer after 6 steps");
});

// ---- @google/genai ----
const genaiAt = (t, apiVersion) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: t.url, ...(apiVersion ? { apiVersion } : {}) } });

for (const v of ["", "v1", "v1beta"]) {
  const label = v || "default";
  check("genai", "gemini", `generateContent (${label})`, async (t) => {
    const r = await genaiAt(t, v).models.generateContent({ model: t.model, contents: "hello" });
    assert(r.text && r.text.length > 0, "empty answer");
    assert(r.candidates[0].finishReason === "STOP", `finishReason ${r.candidates[0].finishReason}`);
    assert(r.responseId && !/^(chatcmpl-|msg_|resp_)/.test(r.responseId), `responseId ${r.responseId}`);
  });
  check("genai", "gemini", `generateContentStream (${label})`, async (t) => {
    let text = "";
    let last;
    for await (const c of await genaiAt(t, v).models.generateContentStream({ model: t.model, contents: "hello" })) {
      text += c.text ?? "";
      last = c;
    }
    assert(text.length > 20, `streamed text ${JSON.stringify(text)}`);
    assert(last.candidates[0].finishReason === "STOP", `finishReason ${last.candidates[0].finishReason}`);
  });
}

check("genai", "gemini", "function call", async (t) => {
  const r = await genaiAt(t).models.generateContent({
    model: t.model,
    contents: "What is the weather in Paris?",
    config: { tools: [{ functionDeclarations: loopTools.map((name) => ({ name, parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } } })) }] },
  });
  const calls = r.functionCalls ?? [];
  assert(calls.length > 0 && loopTools.includes(calls[0].name), `function calls ${JSON.stringify(calls)}`);
});

check("genai", "gemini", "chat with function responses", async (t) => {
  const chat = genaiAt(t).chats.create({
    model: t.model,
    config: { tools: [{ functionDeclarations: loopTools.map((name) => ({ name, parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } } })) }] },
  });
  let r = await chat.sendMessage({ message: "What time is it in the capital of France?" });
  for (let step = 0; step < 6 && r.functionCalls?.length; step++) {
    r = await chat.sendMessage({ message: r.functionCalls.map((fc) => ({ functionResponse: { id: fc.id, name: fc.name, response: { result: toolResult(fc.name) } } })) });
  }
  assert(r.text?.includes("get_time"), `final text ${JSON.stringify(r.text)}`);
});

// ---- Vercel AI SDK (ai + @ai-sdk/openai: the default provider speaks the Responses API) ----
const aiProvider = (t) => createOpenAI({ baseURL: t.url + "/v1", apiKey: key });
const aiTools = () =>
  Object.fromEntries(
    loopTools.map((name) => [name, aiTool({ description: name, inputSchema: z.object({ city: z.string().optional() }), execute: async () => toolResult(name) })]),
  );

check("ai-sdk", "responses", "generateText (responses)", async (t) => {
  const r = await generateText({ model: aiProvider(t)(t.model), prompt: "hello", maxRetries: 0 });
  assert(r.text.length > 0, "empty answer");
  assert(r.finishReason === "stop", `finishReason ${r.finishReason}`);
});

check("ai-sdk", "responses", "streamText (responses)", async (t) => {
  const r = streamText({ model: aiProvider(t)(t.model), prompt: "hello", maxRetries: 0, onError: () => {} });
  let text = "";
  for await (const d of r.textStream) text += d;
  assert(text.length > 20, `streamed text ${JSON.stringify(text)}`);
  assert((await r.finishReason) === "stop", `finishReason ${await r.finishReason}`);
});

check("ai-sdk", "responses", "tool loop (responses)", async (t) => {
  const r = await generateText({ model: aiProvider(t)(t.model), prompt: "What time is it in the capital of France?", tools: aiTools(), stopWhen: stepCountIs(6), maxRetries: 0 });
  const called = r.steps.flatMap((s) => s.toolCalls.map((c) => c.toolName));
  assert(called.join(",") === loopTools.join(","), `tools called ${called}`);
  assert(r.text.includes("get_time"), `final text ${JSON.stringify(r.text)}`);
});

check("ai-sdk", "responses", "streamText tool loop (responses)", async (t) => {
  const r = streamText({ model: aiProvider(t)(t.model), prompt: "What time is it in the capital of France?", tools: aiTools(), stopWhen: stepCountIs(6), maxRetries: 0, onError: () => {} });
  let text = "";
  for await (const d of r.textStream) text += d;
  const steps = await r.steps;
  assert(steps.length === 4, `steps ${steps.length}`);
  assert(text.includes("get_time"), `final text ${JSON.stringify(text)}`);
});

check("ai-sdk", "responses", "previousResponseId (responses)", async (t) => {
  const first = await generateText({ model: aiProvider(t)(t.model), prompt: "My name is Ada.", maxRetries: 0 });
  const id = first.providerMetadata?.openai?.responseId;
  assert(id?.startsWith("resp_"), `response id ${id}`);
  const r = await generateText({ model: aiProvider(t)(t.model), prompt: "What is my name?", maxRetries: 0, providerOptions: { openai: { previousResponseId: id } } });
  assert(r.text.length > 0, "empty answer");
}, { gatewayOnly: true });

check("ai-sdk", "responses", "generateObject (responses)", async (t) => {
  const r = await generateObject({ model: aiProvider(t)(t.model), schema: z.object({ total: z.number(), currency: z.string() }), prompt: "An invoice, please.", maxRetries: 0 });
  assert(typeof r.object.total === "number" && typeof r.object.currency === "string", `object ${JSON.stringify(r.object)}`);
});

check("ai-sdk", "chat", "generateText (chat)", async (t) => {
  const r = await generateText({ model: aiProvider(t).chat(t.model), prompt: "hello", maxRetries: 0 });
  assert(r.text.length > 0 && r.finishReason === "stop", `${r.finishReason} ${r.text}`);
});

check("ai-sdk", "chat", "tool loop (chat)", async (t) => {
  const r = await generateText({ model: aiProvider(t).chat(t.model), prompt: "What time is it in the capital of France?", tools: aiTools(), stopWhen: stepCountIs(6), maxRetries: 0 });
  assert(r.text.includes("get_time"), `final text ${JSON.stringify(r.text)}`);
});

// ---- @openai/agents (Responses API by default) ----
setTracingDisabled(true);
// Each target gets its own runner and provider (the default client is
// process-wide and cached by the default provider).
const runnerFor = (t) => new Runner({ modelProvider: new OpenAIProvider({ openAIClient: openaiAt(t) }), tracingDisabled: true });
const agentFor = (t) =>
  new Agent({
    name: "brownout",
    instructions: "Answer with the tools.",
    model: t.model,
    tools: loopTools.map((name) => agentTool({ name, description: name, parameters: z.object({ city: z.string().nullable() }), execute: async () => toolResult(name) })),
  });

check("openai-agents", "responses", "run tool loop", async (t) => {
  const r = await runnerFor(t).run(agentFor(t), "What time is it in the capital of France?");
  assert(typeof r.finalOutput === "string" && r.finalOutput.includes("get_time"), `final output ${JSON.stringify(r.finalOutput)}`);
});

check("openai-agents", "responses", "run tool loop streamed", async (t) => {
  const r = await runnerFor(t).run(agentFor(t), "What time is it in the capital of France?", { stream: true });
  let text = "";
  for await (const e of r.toTextStream()) text += e;
  await r.completed;
  assert(r.finalOutput.includes("get_time") && text === r.finalOutput, `final output ${JSON.stringify(r.finalOutput)} streamed ${JSON.stringify(text)}`);
});

// A server-managed conversation: each turn of the second run's tool loop
// sends only its new items and the previous response's id.
check("openai-agents", "responses", "run with previousResponseId", async (t) => {
  const first = await runnerFor(t).run(agentFor(t), "What time is it in the capital of France?");
  assert(first.lastResponseId?.startsWith("resp_"), `last response id ${first.lastResponseId}`);
  const r = await runnerFor(t).run(agentFor(t), "And in the capital of Italy?", { previousResponseId: first.lastResponseId });
  assert(typeof r.finalOutput === "string" && r.finalOutput.includes("get_time"), `final output ${JSON.stringify(r.finalOutput)}`);
}, { gatewayOnly: true });

// ---- LangChain (@langchain/openai) ----
const lcAt = (t, useResponsesApi) => new ChatOpenAI({ model: t.model, apiKey: key, useResponsesApi, maxRetries: 0, configuration: { baseURL: t.url + "/v1" } });

for (const [api, responses] of [["responses", true], ["chat", false]]) {
  check("langchain", api, `invoke (${api})`, async (t) => {
    const m = await lcAt(t, responses).invoke("hello");
    assert(m.text.length > 0, "empty answer");
  });
  check("langchain", api, `stream (${api})`, async (t) => {
    let text = "";
    for await (const c of await lcAt(t, responses).stream("hello")) text += c.text;
    assert(text.length > 20, `streamed text ${JSON.stringify(text)}`);
  });
  check("langchain", api, `bindTools (${api})`, async (t) => {
    const m = await lcAt(t, responses)
      .bindTools(loopTools.map((name) => ({ type: "function", function: { name, description: name, parameters: { type: "object", properties: { city: { type: "string" } } } } })))
      .invoke("What time is it in the capital of France?");
    assert(m.tool_calls.length > 0 && m.tool_calls[0].name === "find_city", `tool calls ${JSON.stringify(m.tool_calls)}`);
  });
}

check("langchain", "responses", "withStructuredOutput (responses)", async (t) => {
  const o = await lcAt(t, true).withStructuredOutput(z.object({ total: z.number() }), { name: "invoice" }).invoke("An invoice, please.");
  assert(typeof o.total === "number", `object ${JSON.stringify(o)}`);
});

// ---- run ----
const withTimeout = (p) =>
  Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${checkTimeoutMs} ms`)), checkTimeoutMs).unref())]);

for (const c of checks) {
  if (only && c.client !== only) continue;
  const start = Date.now();
  let ok = true;
  let error;
  try {
    await withTimeout(c.fn());
  } catch (e) {
    ok = false;
    error = String(e?.stack ?? e).split("\n").slice(0, 4).join(" | ");
  }
  console.log(JSON.stringify({ client: c.client, check: c.check, target: c.target, phase, ok, ms: Date.now() - start, ...(error ? { error } : {}) }));
}
