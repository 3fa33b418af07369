package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/brownout-dev/brownout/llm"
)

// Path is the Messages endpoint, relative to the API base URL.
const Path = "/v1/messages"

// API versions (the anthropic-version request header). The wire shapes this
// codec reads and writes are the same in both, except that 2026-10-21
// rejects temperature, top_p and top_k with a 400.
const (
	Version20230601 = "2023-06-01"
	Version20261021 = "2026-10-21"
)

// DefaultMaxTokens is the max_tokens EncodeRequest writes when the request
// leaves MaxTokens unset: the Messages API requires the field.
const DefaultMaxTokens = 4096

// Codec is the Anthropic Messages wire format. Its zero value is ready to use.
type Codec struct {
	// Version is the anthropic-version the encoded requests will be sent
	// with; "" means Version20230601. With Version20261021, EncodeRequest
	// refuses temperature, top_p and top_k, which that version rejects.
	// Decoding accepts both versions' requests.
	Version string
}

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
