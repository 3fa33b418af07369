package openai_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/brownout-dev/brownout/internal/golden"
	"github.com/brownout-dev/brownout/llm"
)

func fullRequest() *llm.Request {
	temp, topP, seed := 0.7, 0.95, int64(7)
	return &llm.Request{
		Model: "gpt-4o",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Part{llm.TextPart("You are terse. <b>No HTML</b> & no fluff.")}},
			{Role: llm.RoleUser, Name: "ann", Content: []llm.Part{
				llm.TextPart("What is in this image, and the weather in Paris?"),
				{Type: llm.PartImage, URL: "https://example.com/cat.png"},
				{Type: llm.PartImage, MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("A cat. Checking the weather.")}, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Name: "get_weather", Content: []llm.Part{llm.TextPart(`{"temp_c":21}`)}},
		},
		Tools: []llm.Tool{{Name: "get_weather", Description: "Current weather for a city", Strict: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}},
		ToolChoice:     &llm.ToolChoice{Mode: llm.ToolChoiceRequired, DisableParallel: true},
		ResponseFormat: &llm.ResponseFormat{Type: llm.ResponseJSONSchema, Name: "answer", Strict: true, Schema: json.RawMessage(`{"type":"object"}`)},
		MaxTokens:      300, Temperature: &temp, TopP: &topP, Seed: &seed, Stop: []string{"END", "\n\n"},
		Stream: true, IncludeUsage: true, User: "user-7", Metadata: map[string]string{"team": "sre", "env": "prod"},
		Extra: map[string]json.RawMessage{"n": json.RawMessage("1"), "logit_bias": json.RawMessage(`{"50256":-100}`)},
	}
}

func TestGoldenRequest(t *testing.T) {
	body, err := codec().EncodeRequest(fullRequest())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/request_full.json", body)
	// Determinism: the same request encodes to the same bytes.
	again, _ := codec().EncodeRequest(fullRequest())
	if !bytes.Equal(body, again) {
		t.Error("encoding the same request twice gave different bytes")
	}
}

func TestGoldenResponses(t *testing.T) {
	for name, resp := range map[string]*llm.Response{
		"response_text.json":    textResponse,
		"response_tools.json":   toolResponse,
		"response_refusal.json": refusalResponse,
	} {
		t.Run(name, func(t *testing.T) {
			body, err := codec().EncodeResponse(resp)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/"+name, body)
		})
	}
}

func TestGoldenErrors(t *testing.T) {
	for name, e := range map[string]*llm.Error{
		"error_rate_limit.json":     {Type: llm.ErrRateLimit, Message: "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1."},
		"error_context_length.json": {Type: llm.ErrContextLength, Param: "messages", Message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens."},
		"error_bad_request.json":    llm.BadRequest("messages[2].content", "Invalid type for 'messages[2].content': expected one of a string or array of objects, but got an integer instead."),
	} {
		t.Run(name, func(t *testing.T) {
			status, body := codec().EncodeError(e)
			golden.Check(t, "testdata/"+name, append([]byte(statusLine(status)+"\n"), body...))
		})
	}
}

func statusLine(status int) string { return fmt.Sprintf("HTTP %d", status) }

func TestGoldenStreams(t *testing.T) {
	for name, evs := range map[string][]llm.StreamEvent{
		"stream_text.sse":  streamOf(textResponse, true),
		"stream_tools.sse": streamOf(toolResponse, false),
		"stream_error.sse": {
			{Type: llm.EventStart, ID: "chatcmpl-5", Model: "gpt-4o"},
			{Type: llm.EventTextDelta, Text: "Half an ans"},
			{Type: llm.EventError, Err: &llm.Error{Type: llm.ErrServer, Message: "The server had an error while processing your request."}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := codec().NewStreamEncoder(&buf)
			for _, ev := range evs {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.Close(); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/"+name, buf.Bytes())
		})
	}
}
