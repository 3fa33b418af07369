package llm

import (
	"encoding/json"
	"time"
)

// Format names a wire format.
type Format string

// The wire formats brownout speaks.
const (
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
	FormatGemini    Format = "gemini"
)

// Role is the author of a message.
type Role string

// Roles. System messages stay in Messages; codecs whose format keeps the system
// prompt apart (Anthropic, Gemini) lift them out on encode and put them back on decode.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType is the kind of one content part.
type PartType string

// Content part kinds.
const (
	PartText  PartType = "text"
	PartImage PartType = "image"
)

// Part is one piece of a message's content.
type Part struct {
	Type PartType `json:"type"`
	Text string   `json:"text,omitempty"`
	// URL is an image URL or a data: URI.
	URL string `json:"url,omitempty"`
	// MediaType is the MIME type of inline image data ("image/png").
	MediaType string `json:"media_type,omitempty"`
	// Data is inline image data (base64-decoded).
	Data []byte `json:"data,omitempty"`
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Type: PartText, Text: s} }

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content []Part `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a RoleTool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool name for a RoleTool message (Gemini needs it) or a participant name.
	Name string `json:"name,omitempty"`
	// IsError marks a tool result that reports a failure (Anthropic is_error).
	IsError bool `json:"is_error,omitempty"`
}

// Text concatenates the message's text parts.
func (m Message) Text() string {
	if len(m.Content) == 1 {
		return m.Content[0].Text
	}
	n := 0
	for _, p := range m.Content {
		n += len(p.Text)
	}
	b := make([]byte, 0, n)
	for _, p := range m.Content {
		if p.Type == PartText {
			b = append(b, p.Text...)
		}
	}
	return string(b)
}

// ToolCall is a function call made by the model. Arguments is the raw JSON text
// of the arguments exactly as the model produced it (it may not parse).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// ToolChoiceMode says how the model must use tools.
type ToolChoiceMode string

// Tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required"
	ToolChoiceTool     ToolChoiceMode = "tool" // exactly the tool in Name
)

// ToolChoice constrains tool use.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode"`
	Name string         `json:"name,omitempty"`
	// DisableParallel forbids several tool calls in one turn.
	DisableParallel bool `json:"disable_parallel,omitempty"`
}

// ResponseFormatType is the kind of structured output asked for.
type ResponseFormatType string

// Response format kinds.
const (
	ResponseText       ResponseFormatType = "text"
	ResponseJSONObject ResponseFormatType = "json_object"
	ResponseJSONSchema ResponseFormatType = "json_schema"
)

// ResponseFormat asks for structured output.
type ResponseFormat struct {
	Type   ResponseFormatType `json:"type"`
	Name   string             `json:"name,omitempty"`
	Schema json.RawMessage    `json:"schema,omitempty"`
	Strict bool               `json:"strict,omitempty"`
}

// SchemaName returns the format's name or, when it has none (Anthropic's
// and Gemini's structured outputs are unnamed), a stable name made from
// its schema: "response_" and 8 hex digits of the schema's FNV-1a hash, so
// a format that requires a name (OpenAI's json_schema) gets the same name
// for the same schema, request after request.
func (rf *ResponseFormat) SchemaName() string {
	if rf.Name != "" {
		return rf.Name
	}
	h := uint32(2166136261)
	for _, c := range rf.Schema {
		h = (h ^ uint32(c)) * 16777619
	}
	const hex = "0123456789abcdef"
	b := []byte("response_00000000")
	for i := range 8 {
		b[len(b)-1-i] = hex[h>>(4*i)&0xf]
	}
	return string(b)
}

// Request is a chat request in the normalized model.
type Request struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Tools          []Tool          `json:"tools,omitempty"`
	ToolChoice     *ToolChoice     `json:"tool_choice,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	// MaxTokens caps output tokens; 0 means unset.
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	TopK        *int     `json:"top_k,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	Stream      bool     `json:"stream,omitempty"`
	// IncludeUsage asks for a usage event at the end of a stream
	// (OpenAI stream_options.include_usage; always on for Anthropic and Gemini).
	IncludeUsage bool `json:"include_usage,omitempty"`
	// User is the end-user identifier (OpenAI user, Anthropic metadata.user_id).
	User     string            `json:"user,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// Extra carries top-level fields the normalized model does not know, by name,
	// as raw JSON. A codec of the same format writes them back verbatim; a codec
	// of another format refuses them unless the caller drops them first.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// LastUserText returns the text of the last user message, or "".
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleUser {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// FinishReason says why generation stopped.
type FinishReason string

// Finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
	FinishError         FinishReason = "error"
)

// Usage counts tokens. InputTokens includes cached and cache-creation tokens
// (OpenAI's convention); codecs for formats that count them apart (Anthropic) convert.
type Usage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	CachedInputTokens   int `json:"cached_input_tokens,omitempty"`
	CacheCreationTokens int `json:"cache_creation_tokens,omitempty"`
	ReasoningTokens     int `json:"reasoning_tokens,omitempty"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:         u.InputTokens + v.InputTokens,
		OutputTokens:        u.OutputTokens + v.OutputTokens,
		CachedInputTokens:   u.CachedInputTokens + v.CachedInputTokens,
		CacheCreationTokens: u.CacheCreationTokens + v.CacheCreationTokens,
		ReasoningTokens:     u.ReasoningTokens + v.ReasoningTokens,
	}
}

// Response is a complete (non-streamed) chat response.
type Response struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Created int64  `json:"created,omitempty"` // unix seconds
	// Content is the assistant's text.
	Content   string     `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Refusal is a refusal message when the provider reports one apart from content.
	Refusal      string       `json:"refusal,omitempty"`
	FinishReason FinishReason `json:"finish_reason"`
	Usage        Usage        `json:"usage"`
}

// EventType is the kind of one stream event.
type EventType string

// Stream event kinds.
const (
	// EventStart opens a stream; ID and Model are set. Decoders emit it once,
	// first; encoders write their format's opening (Anthropic message_start) or
	// remember ID and Model for every chunk (OpenAI).
	EventStart EventType = "start"
	// EventTextDelta carries Text.
	EventTextDelta EventType = "text_delta"
	// EventToolCallDelta carries ToolCall: the first delta of a call has ID and
	// Name; later ones append to Arguments. Index orders calls.
	EventToolCallDelta EventType = "tool_call_delta"
	// EventFinish carries FinishReason.
	EventFinish EventType = "finish"
	// EventUsage carries Usage (cumulative, final values).
	EventUsage EventType = "usage"
	// EventError carries Err: an in-band error the provider sent in the stream.
	EventError EventType = "error"
)

// StreamEvent is one event of a streamed response, in the normalized model.
type StreamEvent struct {
	Type         EventType      `json:"type"`
	ID           string         `json:"id,omitempty"`
	Model        string         `json:"model,omitempty"`
	Text         string         `json:"text,omitempty"`
	ToolCall     *ToolCallDelta `json:"tool_call,omitempty"`
	FinishReason FinishReason   `json:"finish_reason,omitempty"`
	Usage        *Usage         `json:"usage,omitempty"`
	Err          *Error         `json:"error,omitempty"`
}

// ToolCallDelta is a fragment of a streamed tool call.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// ErrorType is the normalized class of a provider error.
type ErrorType string

// Normalized provider error types.
const (
	ErrInvalidRequest ErrorType = "invalid_request"
	ErrAuthentication ErrorType = "authentication"
	ErrPermission     ErrorType = "permission"
	ErrNotFound       ErrorType = "not_found"
	ErrRateLimit      ErrorType = "rate_limit"
	ErrOverloaded     ErrorType = "overloaded"
	ErrServer         ErrorType = "server_error"
	ErrTimeout        ErrorType = "timeout"
	ErrContextLength  ErrorType = "context_length"
	ErrContentFilter  ErrorType = "content_filter"
)

// Error is a provider error in the normalized model. It is also the error the
// decoders return for a malformed request: Status 400, Type invalid_request,
// Param naming the field.
type Error struct {
	Status  int       `json:"status"`
	Type    ErrorType `json:"type"`
	Code    string    `json:"code,omitempty"`
	Message string    `json:"message"`
	Param   string    `json:"param,omitempty"`
	// RetryAfter is the provider's Retry-After hint; 0 when absent.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// ProviderType is the provider's own error type string ("overloaded_error").
	ProviderType string `json:"provider_type,omitempty"`
}

func (e *Error) Error() string {
	s := string(e.Type)
	if e.Code != "" && e.Code != s {
		s += " (" + e.Code + ")"
	}
	if e.Param != "" {
		s += ": " + e.Param
	}
	return s + ": " + e.Message
}

// StatusFor returns the HTTP status conventionally used for an error type.
func StatusFor(t ErrorType) int {
	switch t {
	case ErrInvalidRequest, ErrContextLength, ErrContentFilter:
		return 400
	case ErrAuthentication:
		return 401
	case ErrPermission:
		return 403
	case ErrNotFound:
		return 404
	case ErrTimeout:
		return 408
	case ErrRateLimit:
		return 429
	case ErrOverloaded:
		return 529
	default:
		return 500
	}
}

// TypeForStatus returns the error type conventionally meant by an HTTP status.
func TypeForStatus(status int) ErrorType {
	switch status {
	case 400, 413, 422:
		return ErrInvalidRequest
	case 401:
		return ErrAuthentication
	case 403:
		return ErrPermission
	case 404:
		return ErrNotFound
	case 408, 504:
		return ErrTimeout
	case 429:
		return ErrRateLimit
	case 503, 529:
		return ErrOverloaded
	default:
		return ErrServer
	}
}

// BadRequest returns the 400 error for a malformed request field.
func BadRequest(param, format string, args ...any) *Error {
	return &Error{Status: 400, Type: ErrInvalidRequest, Param: param, Message: sprintf(format, args...)}
}
