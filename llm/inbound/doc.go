// Package inbound is what a server of LLM APIs (the gateway, a mock
// provider) needs to know about the requests it receives before it can
// decode them: which API a request speaks, decided by its path, and how
// to answer an error in that API's JSON shape — for every path, the ones
// no handler serves included, so an official SDK reports the error with
// its own error type and the server's message instead of "404 page not
// found".
//
// Format decides by path: Gemini's /v1beta/... and /v1/models/{m}:method,
// Anthropic's /v1/messages..., anything else OpenAI's; a path that says
// nothing (/v1/foo) is decided by the headers an SDK always sends
// (anthropic-version, x-goog-api-key). Fallback answers what a ServeMux
// does not route: 405 for a path served with another method, 404 for the
// rest, each in the shape Format picks.
package inbound
