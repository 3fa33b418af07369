package gateway

import (
	"errors"
	"net/http"
	"strings"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/llm/responses"
)

// inbound lists the APIs the gateway accepts: the route pattern and the
// format spoken there. Each is served by serveChat with the format's codec
// (same routing, failover and in-band errors).
var inbound = []struct {
	pattern string
	format  llm.Format
}{
	{"POST /v1/chat/completions", llm.FormatOpenAI},
	{"POST /v1/messages", llm.FormatAnthropic},
	{"POST /v1/responses", responses.Format},
	// The model and the stream mode are in the path:
	// /v1beta/models/{model}:generateContent or :streamGenerateContent.
	{"POST /v1beta/models/{call}", llm.FormatGemini},
}

// handleInbound registers every inbound API on mux.
func (s *Server) handleInbound(mux *http.ServeMux) {
	for _, in := range inbound {
		f, err := codecs.Lookup(in.format)
		if err != nil {
			panic("gateway: inbound format: " + err.Error())
		}
		mux.HandleFunc(in.pattern, func(w http.ResponseWriter, r *http.Request) {
			s.serveChat(w, r, f.Codec)
		})
	}
}

// inboundCodec is the codec of the inbound API a path belongs to (OpenAI's
// for any other path): errors outside serveChat are written in it.
func inboundCodec(path string) llm.Codec {
	for _, in := range inbound {
		p := strings.TrimPrefix(in.pattern, "POST ")
		if p == path || (strings.HasSuffix(p, "}") && strings.HasPrefix(path, p[:strings.LastIndexByte(p, '/')+1])) {
			c, _ := codecs.Codec(in.format)
			return c
		}
	}
	c, _ := codecs.Codec(llm.FormatOpenAI)
	return c
}

// routeFromPath applies what the request's path says (Gemini names the
// model and the stream mode there) to req, or returns the 404 of a path
// that is not the format's endpoint.
func routeFromPath(in llm.Codec, path string, req *llm.Request) error {
	f, err := codecs.Lookup(in.Format())
	if err != nil {
		return err
	}
	model, stream, err := f.Route(path)
	if err != nil {
		return err
	}
	if model != "" {
		req.Model = model
	}
	if stream {
		req.Stream = true
	}
	return nil
}

// asLLMError is err as an *llm.Error (a 400 when it is not one).
func asLLMError(err error) *llm.Error {
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	return &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Message: err.Error()}
}
