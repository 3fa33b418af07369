package openai

import (
	"strconv"

	"github.com/brownout-dev/brownout/llm"
)

// A fast path for the common Chat Completions request — text messages from
// the system, developer, user and assistant roles, the sampling and length
// parameters, stream and stream_options — read without encoding/json. On
// anything else (tools, parts arrays, unknown fields that go to Extra, a
// duplicate key, invalid UTF-8, a value the slow path would reject) it
// reports false and DecodeRequest takes the general path, which also
// produces every error message. FuzzRequestFastPath checks that the two
// paths agree.

var (
	reqTopNames = []string{"model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens",
		"temperature", "top_p", "seed", "user"}
	reqMessageNames = []string{"role", "content", "name"}
)

// parseRequest decodes a simple request; false means "use the general path".
func parseRequest(body []byte) (*llm.Request, bool) {
	p := chunkParser{s: string(body)}
	req := &llm.Request{}
	var (
		seen                 uint32
		haveModel, streamOpt bool
		maxTokens, maxCompl  int
	)
	p.ws()
	ok := p.object(func(key string) bool {
		n, ok := field(key, reqTopNames, &seen)
		switch {
		case !ok || n < 0:
			return false // unknown fields go to Extra: the general path
		case n == 0:
			s, ok := p.str()
			req.Model, haveModel = s, ok
			return ok
		case n == 1:
			return p.array(func() bool {
				m, ok := p.message()
				req.Messages = append(req.Messages, m)
				return ok
			}) && len(req.Messages) > 0
		case n == 2:
			return p.null() || p.boolean(&req.Stream)
		case n == 3:
			if p.null() {
				return true
			}
			streamOpt = true
			var sseen uint32
			return p.object(func(key string) bool {
				if key != "include_usage" || sseen != 0 {
					return false
				}
				sseen = 1
				return p.null() || p.boolean(&req.IncludeUsage)
			})
		case n == 4:
			return p.null() || (p.integer(&maxTokens) && maxTokens >= 1)
		case n == 5:
			return p.null() || (p.integer(&maxCompl) && maxCompl >= 1)
		case n == 6:
			return p.float(&req.Temperature, 0, 2)
		case n == 7:
			return p.float(&req.TopP, 0, 1)
		case n == 8:
			if p.null() {
				return true
			}
			var s int
			if !p.integer(&s) {
				return false
			}
			seed := int64(s)
			req.Seed = &seed
			return true
		case n == 9:
			return p.optString(&req.User)
		}
		return false
	})
	if !ok || !haveModel || len(req.Messages) == 0 || (streamOpt && !req.Stream) {
		return nil, false
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, false
	}
	if maxTokens > 0 {
		req.MaxTokens = maxTokens
	}
	if maxCompl > 0 {
		req.MaxTokens = maxCompl // max_completion_tokens wins
	}
	return req, true
}

// message reads a text message of a system, developer, user or assistant.
func (p *chunkParser) message() (llm.Message, bool) {
	var (
		m                llm.Message
		seen             uint32
		role, content    string
		hasRole, hasText bool
	)
	ok := p.object(func(key string) bool {
		n, ok := field(key, reqMessageNames, &seen)
		switch {
		case !ok || n < 0:
			return false
		case n == 0:
			role, hasRole = p.str()
			return hasRole
		case n == 1:
			content, hasText = p.str()
			return hasText
		default:
			return p.optString(&m.Name)
		}
	})
	if !ok || !hasRole || !hasText {
		return m, false
	}
	switch role {
	case "system", "developer":
		m.Role = llm.RoleSystem
	case "user":
		m.Role = llm.RoleUser
	case "assistant":
		m.Role = llm.RoleAssistant
	default:
		return m, false
	}
	m.Content = []llm.Part{llm.TextPart(content)}
	return m, true
}

func (p *chunkParser) boolean(dst *bool) bool {
	switch {
	case p.literal("true"):
		*dst = true
	case p.literal("false"):
		*dst = false
	default:
		return false
	}
	return true
}

// float reads a number in [lo, hi], or null.
func (p *chunkParser) float(dst **float64, lo, hi float64) bool {
	if p.null() {
		*dst = nil
		return true
	}
	start := p.i
	if !p.number() {
		return false
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil || f < lo || f > hi {
		return false
	}
	*dst = &f
	return true
}
