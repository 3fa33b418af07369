package openai

import (
	"io"
	"time"

	"github.com/brownout-dev/brownout/llm"
)

// Codec is the OpenAI Chat Completions format. The zero value is ready to use.
type Codec struct {
	// Now returns the current time. It stamps "created" when a response or a
	// stream has none, and resolves a Retry-After HTTP date. Nil means time.Now.
	Now func() time.Time
}

var _ llm.Codec = Codec{}

// Format returns llm.FormatOpenAI.
func (Codec) Format() llm.Format { return llm.FormatOpenAI }

func (c Codec) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// NewStreamEncoder returns an encoder writing chat.completion.chunk events to w.
func (c Codec) NewStreamEncoder(w io.Writer) llm.StreamEncoder { return newStreamEncoder(c, w) }

// NewStreamDecoder returns a decoder of chat.completion.chunk events from r.
func (c Codec) NewStreamDecoder(r io.Reader) llm.StreamDecoder { return newStreamDecoder(r) }

func unsupported(feature, reason string) *llm.UnsupportedError {
	return &llm.UnsupportedError{Format: llm.FormatOpenAI, Feature: feature, Reason: reason}
}
