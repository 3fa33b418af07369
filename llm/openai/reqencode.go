package openai

import (
	"math"
	"strconv"
)

// appendRequest writes w the way marshal (encoding/json, HTML escaping off)
// does, for the common request: text messages (with tool calls), sampling
// and length parameters, stop, stream options. Tools, tool_choice,
// response_format, metadata, content parts or a float encoding/json would
// write in exponent form report false: the caller marshals w instead.
// FuzzRequestEncodeFastPath checks that the two agree byte for byte.
func appendRequest(b []byte, w *wireRequest) ([]byte, bool) {
	if w.Tools != nil || w.ToolChoice != nil || w.ParallelToolCalls != nil || w.ResponseFormat != nil || len(w.Metadata) > 0 {
		return nil, false
	}
	b = append(b, `{"model":`...)
	b = appendString(b, w.Model)
	b = append(b, `,"messages":`...)
	if w.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range w.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendMessage(b, &w.Messages[i]); !ok {
				return nil, false
			}
		}
		b = append(b, ']')
	}
	if w.MaxCompletionTokens != 0 {
		b = append(b, `,"max_completion_tokens":`...)
		b = strconv.AppendInt(b, int64(w.MaxCompletionTokens), 10)
	}
	var ok bool
	if w.Temperature != nil {
		b = append(b, `,"temperature":`...)
		if b, ok = appendFloat(b, *w.Temperature); !ok {
			return nil, false
		}
	}
	if w.TopP != nil {
		b = append(b, `,"top_p":`...)
		if b, ok = appendFloat(b, *w.TopP); !ok {
			return nil, false
		}
	}
	if w.Seed != nil {
		b = append(b, `,"seed":`...)
		b = strconv.AppendInt(b, *w.Seed, 10)
	}
	if len(w.Stop) > 0 {
		b = append(b, `,"stop":[`...)
		for i, s := range w.Stop {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, ']')
	}
	if w.Stream {
		b = append(b, `,"stream":true`...)
	}
	if w.StreamOptions != nil {
		b = append(b, `,"stream_options":{"include_usage":`...)
		b = strconv.AppendBool(b, w.StreamOptions.IncludeUsage)
		b = append(b, '}')
	}
	if w.User != "" {
		b = append(b, `,"user":`...)
		b = appendString(b, w.User)
	}
	return append(b, '}'), true
}

func appendMessage(b []byte, m *wireMessage) ([]byte, bool) {
	b = append(b, `{"role":`...)
	b = appendString(b, m.Role)
	if m.Name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, m.Name)
	}
	switch c := m.Content.(type) {
	case nil:
	case string:
		b = append(b, `,"content":`...)
		b = appendString(b, c)
	default:
		return nil, false
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendString(b, tc.ID)
			b = append(b, `,"type":`...)
			b = appendString(b, tc.Type)
			b = append(b, `,"function":{"name":`...)
			b = appendString(b, tc.Function.Name)
			b = append(b, `,"arguments":`...)
			b = appendString(b, tc.Function.Arguments)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
	}
	return append(b, '}'), true
}

// appendFloat writes f as encoding/json does when it uses the 'f' format;
// the exponent form and non-finite values are left to encoding/json.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return nil, false
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), true
}
