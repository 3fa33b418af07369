package gateway

import (
	"bytes"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/brownout-dev/brownout/gateway/policy"
	"github.com/brownout-dev/brownout/llm"
)

// A request field that only the client's format knows (Anthropic's
// thinking, Gemini's safetySettings, a Responses reasoning setting: what a
// codec keeps in Request.Extra) cannot be honoured by a target of another
// format. The gateway never drops one silently: such a target is skipped
// (an explicit skipped attempt, with the field named) so that a target of
// the client's format serves, and when no target can, the client gets the
// 400 that names the field. A client that prefers an answer without the
// field opts into best effort with the request header
// "X-Brownout-Best-Effort: drop"; the fields dropped for the target that
// served are then named in the response header X-Brownout-Dropped.
const (
	HeaderBestEffort = "X-Brownout-Best-Effort"
	HeaderDropped    = "X-Brownout-Dropped"
)

// bestEffort reports whether the client opted into dropping fields a
// target cannot honour.
func bestEffort(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get(HeaderBestEffort)), "drop")
}

// inert are fields that change where or how an answer is kept, never the
// answer: another format's target leaves them out without a word, as it
// does any field sent as null (the default).
var inert = map[string]bool{"store": true, "service_tier": true, "prompt_cache_key": true, "safety_identifier": true}

// unhonoured lists, sorted, the fields of req (decoded from the from
// format) that a target of the to format cannot honour.
func unhonoured(req *llm.Request, from, to llm.Format) []string {
	if from == to || len(req.Extra) == 0 {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(req.Extra)) {
		if v := bytes.TrimSpace(req.Extra[k]); !inert[k] && len(v) > 0 && string(v) != "null" {
			out = append(out, k)
		}
	}
	return out
}

// honour prepares req (the target's own shallow copy) for a target of the
// to format: fields it cannot honour skip the target, or, with best
// effort, are dropped and recorded for the response header. Inert fields of
// another format are left out.
func (x *exchange) honour(req *llm.Request, to llm.Format, target string) *policy.Outcome {
	from := x.in.Format()
	if from == to || len(req.Extra) == 0 {
		return nil
	}
	names := unhonoured(req, from, to)
	if len(names) > 0 && !x.bestEffort {
		return &policy.Outcome{Class: policy.Skipped, Status: 400, Err: &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Param: names[0],
			Message: "'" + strings.Join(names, "', '") + "' cannot be honoured by a " + string(to) + " target" +
				" (send " + HeaderBestEffort + ": drop to have it dropped)"}}
	}
	req.Extra = nil
	if len(names) > 0 {
		if x.dropped == nil {
			x.dropped = map[string]string{}
		}
		x.dropped[target] = strings.Join(names, ", ")
	}
	return nil
}

// setDropped names on the response the fields dropped for target.
func (x *exchange) setDropped(h http.Header, target string) {
	if d := x.dropped[target]; d != "" {
		h[HeaderDropped] = []string{d}
	}
}
