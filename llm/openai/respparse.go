package openai

import "github.com/brownout-dev/brownout/llm"

// A fast path for chat.completion bodies, on the chunk parser: the common
// answer (content or tool calls, finish reason, usage) is read without
// encoding/json. Anything it does not handle exactly as encoding/json would
// — an error object, a duplicate or case-folded key, a type mismatch,
// invalid UTF-8, surrogate escapes, a null element — reports false and
// DecodeResponse uses encoding/json. FuzzResponseFastPath checks that the
// two paths agree.

var (
	respTopNames      = []string{"id", "created", "model", "choices", "usage", "error", "object"}
	respMessageNames  = []string{"content", "refusal", "tool_calls", "role", "annotations"}
	respToolNames     = []string{"id", "type", "function"}
	usageNames        = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"}
	promptDetailNames = []string{"cached_tokens", "cache_write_tokens"}
	complDetailNames  = []string{"reasoning_tokens"}
	respChoiceAll     = []string{"index", "message", "logprobs", "finish_reason"}
)

// parseResponse decodes body into an llm.Response; false means "use
// encoding/json".
func parseResponse(body []byte) (*llm.Response, bool) {
	p := chunkParser{s: string(body)} // copies: strings then own their bytes
	resp := &llm.Response{}
	nChoices := 0
	p.ws()
	var seen uint32
	ok := p.object(func(key string) bool {
		n, ok := field(key, respTopNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.optString(&resp.ID)
		case n == 1:
			c := int(resp.Created)
			if !p.integer(&c) {
				return false
			}
			resp.Created = int64(c)
			return true
		case n == 2:
			return p.optString(&resp.Model)
		case n == 3:
			if p.null() {
				nChoices = 0
				return true
			}
			return p.array(func() bool {
				nChoices++
				if nChoices == 1 {
					return p.respChoice(resp)
				}
				var discard llm.Response
				return p.respChoice(&discard)
			})
		case n == 4:
			if p.null() {
				return true
			}
			return p.usage(&resp.Usage)
		case n == 5: // error: only null here
			return p.null()
		case n == 6:
			var s string
			return p.optString(&s)
		default:
			return p.skip(0)
		}
	})
	if !ok {
		return nil, false
	}
	p.ws()
	if p.i != len(p.s) || nChoices == 0 {
		return nil, false
	}
	return resp, true
}

func (p *chunkParser) respChoice(r *llm.Response) bool {
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, respChoiceAll, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			var i int
			return p.integer(&i)
		case n == 1:
			if p.null() {
				return true
			}
			return p.respMessage(r)
		case n == 3:
			if p.null() {
				return true
			}
			var s string
			if !p.optString(&s) {
				return false
			}
			r.FinishReason = fromFinishReason(s)
			return true
		default: // logprobs, unknown keys
			return p.skip(0)
		}
	})
}

func (p *chunkParser) respMessage(r *llm.Response) bool {
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, respMessageNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.optString(&r.Content)
		case n == 1:
			return p.optString(&r.Refusal)
		case n == 3:
			var s string
			return p.optString(&s)
		case n == 2:
			if p.null() {
				return true
			}
			return p.array(func() bool {
				var tc llm.ToolCall
				if !p.respToolCall(&tc) {
					return false
				}
				r.ToolCalls = append(r.ToolCalls, tc)
				return true
			})
		default: // role, annotations, unknown keys
			return p.skip(0)
		}
	})
}

func (p *chunkParser) respToolCall(tc *llm.ToolCall) bool {
	var seen uint32
	return p.object(func(key string) bool {
		n, ok := field(key, respToolNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.optString(&tc.ID)
		case n == 1:
			var s string
			return p.optString(&s)
		case n == 2:
			return p.function(&tc.Name, &tc.Arguments)
		default:
			return p.skip(0)
		}
	})
}

func (p *chunkParser) usage(u *llm.Usage) bool {
	var seen uint32
	var total int
	return p.object(func(key string) bool {
		n, ok := field(key, usageNames, &seen)
		switch {
		case !ok:
			return false
		case n == 0:
			return p.integer(&u.InputTokens)
		case n == 1:
			return p.integer(&u.OutputTokens)
		case n == 2:
			return p.integer(&total)
		case n == 3:
			if p.null() {
				return true
			}
			var dseen uint32
			return p.object(func(key string) bool {
				n, ok := field(key, promptDetailNames, &dseen)
				switch {
				case !ok:
					return false
				case n == 0:
					return p.integer(&u.CachedInputTokens)
				case n == 1:
					return p.integer(&u.CacheCreationTokens)
				default:
					return p.skip(0)
				}
			})
		case n == 4:
			if p.null() {
				return true
			}
			var dseen uint32
			return p.object(func(key string) bool {
				n, ok := field(key, complDetailNames, &dseen)
				switch {
				case !ok:
					return false
				case n == 0:
					return p.integer(&u.ReasoningTokens)
				default:
					return p.skip(0)
				}
			})
		default:
			return p.skip(0)
		}
	})
}
