// Package sdkcheck holds the check that the real JavaScript clients accept
// what brownout serves: the official openai, @anthropic-ai/sdk and
// @google/genai SDKs, the Vercel AI SDK (ai with @ai-sdk/openai, whose
// default provider speaks the Responses API, tool loops included),
// @openai/agents and LangChain (@langchain/openai, Chat Completions and
// useResponsesApi), each against the mock providers and against the gateway,
// with the primary healthy and with the primary cutting every stream
// mid-answer.
//
// The clients live in sdkcheck/js: package.json pins every version and
// package-lock.json the whole tree; check.mjs is the script, one JSON line
// per check. TestJavaScriptClients starts the mocks and a gateway on
// loopback ports, runs `node check.mjs` for each phase, and fails on any
// check that fails. Locally it skips, saying why, when node or
// sdkcheck/js/node_modules is missing (run `npm ci` in sdkcheck/js);
// with BROWNOUT_REQUIRE_NODE=1 (set by .ci/run, which installs Node and
// runs npm ci) it fails instead. Node must be at least MinNodeMajor.
//
// The package's Go API is only what the test needs to judge a Node
// installation: NodeMajor.
package sdkcheck
