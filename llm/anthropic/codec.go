package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/brownout-dev/brownout/llm"
)

// DefaultMaxTokens is the max_tokens EncodeRequest writes when the request
// leaves MaxTokens unset: the Messages API requires the field.
const DefaultMaxTokens = 4096

// Codec is the Anthropic Messages wire format. Its zero value is ready to use.
type Codec struct{}

var _ llm.Codec = Codec{}

// Format returns llm.FormatAnthropic.
func (Codec) Format() llm.Format { return llm.FormatAnthropic }

// marshal encodes v like the Messages API does: no HTML escaping, no
// trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil
}

func unsupported(feature, reason string) *llm.UnsupportedError {
	return &llm.UnsupportedError{Format: llm.FormatAnthropic, Feature: feature, Reason: reason}
}
