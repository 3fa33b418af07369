package gateway

import (
	"errors"
	"net/http"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/llm/responses"
)

// inbound lists the APIs the gateway accepts: the route pattern and the
// format spoken there. Each is served by serveChat with the format's codec
// (same routing, failover and in-band errors).
var inboundAPIs = []struct {
	pattern string
	format  llm.Format
}{
	{"POST /v1/chat/completions", llm.FormatOpenAI},
	{"POST /v1/messages", llm.FormatAnthropic},
	{"POST /v1/responses", responses.Format},
	// The model and the stream mode are in the path:
	// /v1beta/models/{model}:generateContent or :streamGenerateContent, and
	// the same under /v1 (Google serves both; @google/genai and genai with
	// APIVersion "v1" call /v1).
	{"POST /v1beta/models/{call}", llm.FormatGemini},
	{"POST /v1/models/{call}", llm.FormatGemini},
}

// handleInbound registers every inbound API on mux.
func (s *Server) handleInbound(mux *http.ServeMux) {
	for _, in := range inboundAPIs {
		f, err := codecs.Lookup(in.format)
		if err != nil {
			panic("gateway: inbound format: " + err.Error())
		}
		mux.HandleFunc(in.pattern, s.tracer.Handler(in.pattern, string(in.format), s.guard(f.Codec)))
	}
}

// routeFromPath reads what the request's path says (Gemini names the
// model and the stream mode there), or returns the 404 of a path that is
// not the format's endpoint. It is checked before the body is decoded, so
// an unknown endpoint is a 404 whatever the body.
func routeFromPath(in llm.Codec, path string) (model string, stream bool, err error) {
	f, err := codecs.Lookup(in.Format())
	if err != nil {
		return "", false, err
	}
	return f.Route(path)
}

// asLLMError is err as an *llm.Error (a 400 when it is not one).
func asLLMError(err error) *llm.Error {
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	return &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Message: err.Error()}
}
