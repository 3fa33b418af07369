package codecs

import (
	"fmt"
	"strings"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/anthropic"
	"github.com/brownout-dev/brownout/llm/gemini"
	"github.com/brownout-dev/brownout/llm/openai"
	"github.com/brownout-dev/brownout/llm/responses"
)

// Format is one row of the table.
type Format struct {
	Codec llm.Codec
	// path returns the chat endpoint's path (and query) for a model, from
	// the API root: "/v1/chat/completions".
	path func(model string, stream bool) string
	// AuthHeader carries the API key; AuthPrefix goes before it
	// ("Bearer ").
	AuthHeader, AuthPrefix string
	// KeyEnv is the environment variable conventionally holding a key.
	KeyEnv string
	// route reads a request path; nil: the path must be path("", false).
	route func(path string) (model string, stream bool, err error)
	// notFound words the 404 for a path that is not the endpoint.
	notFound func(path string) string
}

// Route reads the path of a request sent to this format's endpoint: the
// model and stream mode when the path names them (Gemini), else "" and
// false. A path that is not the endpoint is a 404 *llm.Error worded as the
// provider words it.
func (f *Format) Route(path string) (model string, stream bool, err error) {
	if f.route != nil {
		return f.route(path)
	}
	if path == f.path("", false) {
		return "", false, nil
	}
	return "", false, &llm.Error{Status: 404, Type: llm.ErrNotFound, Message: f.notFound(path)}
}

// Path returns the chat endpoint's path for model from the API root
// ("/v1/messages", "/v1beta/models/gemini-2.5-flash:generateContent").
func (f *Format) Path(model string, stream bool) string { return f.path(model, stream) }

// table lists the formats; the first is the default.
var table = []Format{
	{Codec: openai.Codec{}, path: fixed("/v1/chat/completions"), AuthHeader: "Authorization", AuthPrefix: "Bearer ",
		KeyEnv: "OPENAI_API_KEY", notFound: openAINotFound},
	{Codec: anthropic.Codec{}, path: fixed("/v1/messages"), AuthHeader: "X-Api-Key",
		KeyEnv: "ANTHROPIC_API_KEY", notFound: func(string) string { return "Not Found" }},
	{Codec: gemini.Codec{}, path: gemini.Path, AuthHeader: "X-Goog-Api-Key",
		KeyEnv: "GEMINI_API_KEY", route: gemini.ParsePath},
	{Codec: responses.Codec{}, path: fixed("/v1/responses"), AuthHeader: "Authorization", AuthPrefix: "Bearer ",
		KeyEnv: "OPENAI_API_KEY", notFound: openAINotFound},
}

func openAINotFound(path string) string { return "Invalid URL (POST " + path + ")" }

func fixed(p string) func(string, bool) string { return func(string, bool) string { return p } }

// Lookup returns the row of format f; "" is the default format (OpenAI
// Chat Completions). An unknown format is an error naming the known ones.
func Lookup(f llm.Format) (*Format, error) {
	if f == "" {
		return &table[0], nil
	}
	for i := range table {
		if table[i].Codec.Format() == f {
			return &table[i], nil
		}
	}
	return nil, fmt.Errorf("unknown format %q: want one of %s", f, Names())
}

// Codec returns the codec of format f ("" is OpenAI Chat Completions).
func Codec(f llm.Format) (llm.Codec, error) {
	r, err := Lookup(f)
	if err != nil {
		return nil, err
	}
	return r.Codec, nil
}

// Wording returns the error wording of format f, or the default format's
// when f is unknown (an error must still be worded).
func Wording(f llm.Format) llm.Wording {
	if r, err := Lookup(f); err == nil {
		return r.Codec
	}
	return table[0].Codec
}

// Formats lists the formats in the table's order.
func Formats() []llm.Format {
	out := make([]llm.Format, len(table))
	for i := range table {
		out[i] = table[i].Codec.Format()
	}
	return out
}

// Names lists the formats for a message: "openai, anthropic, gemini".
func Names() string {
	var b strings.Builder
	for i := range table {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(table[i].Codec.Format()))
	}
	return b.String()
}
