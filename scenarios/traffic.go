package scenarios

import "github.com/brownout-dev/brownout/llm"

// What a request of the game day's traffic asks for beyond its prompt,
// defined once for both engines.

// structSchema is the JSON schema a structured request (Traffic.Structured)
// asks the answer to follow.
var structSchema = &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer", Strict: true,
	Schema: []byte(`{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number"}},"required":["answer","confidence"],"additionalProperties":false}`)}

// toolOffer is the tool a request with tools (Traffic.Tools) offers, and
// must call: an agent's first turn, whose answer is a tool call streamed as
// argument deltas.
var toolOffer = []llm.Tool{{Name: "get_weather", Description: "The weather in a city now.",
	Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}}

// shapeRequest gives req what the traffic drew for it: a response_format
// for a structured request, the tool and tool_choice required for one with
// tools.
func shapeRequest(req *llm.Request, structured, tools bool) {
	if structured {
		req.ResponseFormat = structSchema
	}
	if tools {
		req.Tools = toolOffer
		req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceRequired}
	}
}
