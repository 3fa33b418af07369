package faults

import (
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
)

// RejectParam answers 400 naming a request parameter the model does not
// accept (as reasoning models refuse temperature). It applies only to
// requests that carry the parameter: temperature, top_p, top_k, seed, stop,
// max_tokens, tools, tool_choice, response_format, user, metadata, or any
// other top-level field by its wire name.
type RejectParam struct {
	Param   string
	Message string
}

// Matches reports whether the request carries the parameter.
func (f RejectParam) Matches(e *Env) bool {
	r := e.Request
	if r == nil {
		return false
	}
	switch f.Param {
	case "temperature":
		return r.Temperature != nil
	case "top_p":
		return r.TopP != nil
	case "top_k":
		return r.TopK != nil
	case "seed":
		return r.Seed != nil
	case "stop", "stop_sequences":
		return len(r.Stop) > 0
	case "max_tokens", "max_completion_tokens", "max_output_tokens":
		return r.MaxTokens > 0
	case "tools":
		return len(r.Tools) > 0
	case "tool_choice":
		return r.ToolChoice != nil
	case "response_format":
		return r.ResponseFormat != nil
	case "user":
		return r.User != ""
	case "metadata":
		return len(r.Metadata) > 0
	}
	_, ok := r.Extra[f.Param]
	return ok
}

// Apply turns the plan into the 400.
func (f RejectParam) Apply(p *Plan, e *Env) {
	code, msg := codecs.Wording(e.Format).UnsupportedParamText(f.Param)
	if f.Message != "" {
		msg = f.Message
	}
	err := ProviderError(e.Format, 400, llm.ErrInvalidRequest, msg)
	err.Param, err.Code = f.Param, code
	p.SetError(err)
}

func buildRejectParam(s *Spec) Fault {
	param := s.Param
	if param == "" {
		param = "temperature"
	}
	return RejectParam{Param: param, Message: s.Message}
}
