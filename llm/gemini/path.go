package gemini

import (
	"fmt"
	"net/url"
	"strings"
)

// The two methods of a model resource that carry chat traffic.
const (
	methodGenerate = "generateContent"
	methodStream   = "streamGenerateContent"
)

// Path returns the request path (and, for streams, the query string) of a
// generateContent call: "/v1beta/models/{model}:generateContent" or
// "/v1beta/models/{model}:streamGenerateContent?alt=sse". A model given with its
// "models/" prefix is accepted. Callers join it to the base URL.
func Path(model string, stream bool) string {
	model = strings.TrimPrefix(model, "models/")
	if stream {
		return "/v1beta/models/" + url.PathEscape(model) + ":" + methodStream + "?alt=sse"
	}
	return "/v1beta/models/" + url.PathEscape(model) + ":" + methodGenerate
}

// ParsePath reads the model and the stream mode from a request path such as
// "/v1beta/models/gemini-2.5-flash:streamGenerateContent" (API versions v1 and
// v1beta; any query string is ignored: the server checks alt=sse itself). A
// path that names no generateContent method is a 404 *llm.Error, as Google
// answers it.
func ParsePath(path string) (model string, stream bool, err error) {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	rest, ok := strings.CutPrefix(path, "/v1beta/models/")
	if !ok {
		rest, ok = strings.CutPrefix(path, "/v1/models/")
	}
	if !ok {
		return "", false, notFound(path)
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", false, notFound(path)
	}
	model, method := rest[:i], rest[i+1:]
	switch method {
	case methodGenerate:
	case methodStream:
		stream = true
	default:
		return "", false, notFound(path)
	}
	if m, err := url.PathUnescape(model); err == nil {
		model = m
	}
	if model == "" || strings.ContainsAny(model, "/:") {
		return "", false, notFound(path)
	}
	return model, stream, nil
}

func notFound(path string) error {
	e := errorFor(404, "NOT_FOUND", fmt.Sprintf("path %q is not a generateContent or streamGenerateContent method of a model", path))
	return e
}
