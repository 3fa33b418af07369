package policy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/brownout-dev/brownout/llm"
)

// Request returns the request to send to t: a shallow copy of req with
// [Target.Apply] done. req itself is never modified (it may be sent to another
// target next).
func (t *Target) Request(req *llm.Request) (*llm.Request, error) {
	out := *req
	if err := t.Apply(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Apply turns r, the caller's own shallow copy of a request, into the request
// to send to t: t's model, t's DropParams removed and OverrideParams set.
// Parameters the normalized model knows by name (temperature, top_p, top_k,
// max_tokens, seed, stop, user, tools, tool_choice, response_format,
// parallel_tool_calls, metadata) are set or cleared in place; any other name
// is an entry of Request.Extra, which is cloned before it changes so a map
// shared with the original request is never written. The gateway and the
// simulator both call it, so a game day sends what the gateway would.
func (t *Target) Apply(r *llm.Request) error {
	r.Model = t.Model
	if len(t.DropParams) == 0 && len(t.OverrideParams) == 0 {
		return nil
	}
	if r.Extra != nil {
		r.Extra = maps.Clone(r.Extra)
	}
	for _, p := range t.DropParams {
		dropParam(r, p)
	}
	for _, k := range slices.Sorted(maps.Keys(t.OverrideParams)) {
		if err := setParam(r, k, t.OverrideParams[k]); err != nil {
			return fmt.Errorf("override_params.%s: %w", k, err)
		}
	}
	return nil
}

func dropParam(r *llm.Request, name string) {
	switch name {
	case "temperature":
		r.Temperature = nil
	case "top_p":
		r.TopP = nil
	case "top_k":
		r.TopK = nil
	case "max_tokens", "max_completion_tokens", "max_output_tokens":
		r.MaxTokens = 0
	case "seed":
		r.Seed = nil
	case "stop", "stop_sequences":
		r.Stop = nil
	case "user":
		r.User = ""
	case "metadata":
		r.Metadata = nil
	case "tools":
		r.Tools, r.ToolChoice = nil, nil
	case "tool_choice":
		r.ToolChoice = nil
	case "parallel_tool_calls":
		if r.ToolChoice != nil {
			tc := *r.ToolChoice
			tc.DisableParallel = false
			r.ToolChoice = &tc
		}
	case "response_format":
		r.ResponseFormat = nil
	default:
		delete(r.Extra, name)
	}
}

// setParam sets one parameter from a YAML value.
func setParam(r *llm.Request, name string, v any) error {
	num := func() (float64, error) {
		switch x := v.(type) {
		case int:
			return float64(x), nil
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		}
		return 0, fmt.Errorf("must be a number, not %T", v)
	}
	switch name {
	case "temperature", "top_p":
		f, err := num()
		if err != nil {
			return err
		}
		if name == "temperature" {
			r.Temperature = &f
		} else {
			r.TopP = &f
		}
	case "top_k", "max_tokens", "max_completion_tokens", "max_output_tokens":
		f, err := num()
		if err != nil {
			return err
		}
		n := int(f)
		if name == "top_k" {
			r.TopK = &n
		} else {
			r.MaxTokens = n
		}
	case "seed":
		f, err := num()
		if err != nil {
			return err
		}
		n := int64(f)
		r.Seed = &n
	case "user":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("must be a string")
		}
		r.User = s
	case "stop", "tools", "tool_choice", "response_format", "metadata", "parallel_tool_calls":
		return fmt.Errorf("cannot be overridden (drop it instead)")
	default:
		b, err := json.Marshal(jsonable(v))
		if err != nil {
			return err
		}
		if r.Extra == nil {
			r.Extra = map[string]json.RawMessage{}
		}
		r.Extra[name] = b
	}
	return nil
}

// jsonable converts YAML-decoded maps (map[string]any or map[any]any) for
// encoding/json.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonable(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = jsonable(e)
		}
		return s
	}
	return v
}
