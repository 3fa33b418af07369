package policy

import (
	"slices"
	"testing"

	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/llm"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		status int
		typ    llm.ErrorType
		want   Class
	}{
		{200, "", OK},
		{0, "", OK},
		{429, "", RateLimited},
		{429, llm.ErrRateLimit, RateLimited},
		{503, "", Overloaded},
		{529, llm.ErrOverloaded, Overloaded},
		{500, "", ServerError},
		{502, llm.ErrServer, ServerError},
		{401, llm.ErrAuthentication, Auth},
		{403, llm.ErrPermission, Auth},
		{404, llm.ErrNotFound, Auth},
		{400, llm.ErrInvalidRequest, BadRequestParam},
		{422, "", BadRequestParam},
		{400, llm.ErrContextLength, ContextLength},
		{413, "", ContextLength},
		{400, llm.ErrContentFilter, ContentFilter},
		{408, "", TimeoutTotal},
		{504, llm.ErrTimeout, TimeoutTotal},
		{499, "", UpstreamCanceled},
		{499, llm.ErrServer, UpstreamCanceled},
		{101, "", ProtocolError},
		{103, "", ProtocolError},
		{302, "", ProtocolError},
		{302, llm.ErrRateLimit, ProtocolError}, // whatever the body says
		{304, "", ProtocolError},
		{600, "", ProtocolError},
		{402, "", Rejected},
		{405, llm.ErrInvalidRequest, Rejected},
		{409, "", Rejected},
		{410, "", Rejected},
		{418, "", Rejected},
		{451, "", Rejected},
		{501, "", ServerError},
		{505, "", ServerError},
		{0, llm.ErrServer, ServerError}, // an in-band stream error
	}
	for _, tt := range tests {
		t.Run(string(tt.want)+"/"+string(tt.typ), func(t *testing.T) {
			require.Equal(t, tt.want, Classify(tt.status, tt.typ), "Classify(%d, %q)", tt.status, tt.typ)
		})
	}
}

// TestOutcomeClasses checks what follows each class on the first target of a
// two-target route when the first target keeps failing and the second
// succeeds.
func TestOutcomeClasses(t *testing.T) {
	const a, b = "openai:gpt-4o", "anthropic:claude-sonnet"
	tests := []struct {
		class  Class
		status int
		want   []string
		// counted: the outcome is held against the target's breaker.
		counted bool
	}{
		{OK, 200, []string{a, "done"}, false},
		{RateLimited, 429, []string{a, "wait", a, b, "done"}, true},
		{Overloaded, 503, []string{a, "wait", a, b, "done"}, true},
		{Overloaded, 529, []string{a, b, "done"}, true}, // 529 is not in on_status_codes
		{ServerError, 500, []string{a, "wait", a, b, "done"}, true},
		{ServerError, 501, []string{a, "fail"}, true}, // in neither list
		{ConnectError, 0, []string{a, "wait", a, b, "done"}, true},
		{Reset, 0, []string{a, "wait", a, b, "done"}, true},
		{TimeoutTTFT, 0, []string{a, b, "done"}, true},
		{Stall, 0, []string{a, b, "done"}, true},
		{TokenRateFloor, 0, []string{a, b, "done"}, true},
		{CutMidStream, 0, []string{a, b, "done"}, true},
		{MalformedStream, 0, []string{a, b, "done"}, true},
		{TimeoutTotal, 0, []string{a, b, "done"}, true},
		{Auth, 401, []string{a, b, "done"}, true},
		{BadRequestParam, 400, []string{a, b, "done"}, false},
		{ContextLength, 400, []string{a, b, "done"}, false},
		{ContentFilter, 400, []string{a, "fail"}, false},
		{ClientCanceled, 0, []string{a, "fail"}, false},
		{Truncated, 200, []string{a, b, "done"}, false},
		{InvalidOutput, 200, []string{a, b, "done"}, false},
		{ProtocolError, 101, []string{a, b, "done"}, true},
		{ProtocolError, 302, []string{a, b, "done"}, true},
		{UpstreamCanceled, 499, []string{a, "wait", a, b, "done"}, true},
		{Rejected, 402, []string{a, b, "done"}, true},
		{Rejected, 409, []string{a, b, "done"}, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.class)+"/"+itoa(tt.status), func(t *testing.T) {
			cfg := oneRoute(tgt(a), tgt(b, prio(1)))
			var log events.Log
			e := newEngine(t, cfg, &log)
			final, trail, _ := drive(e, t0, Request{ID: "r1"}, byTarget(map[string]Outcome{a: {Class: tt.class, Status: tt.status}}))
			if d := cmp.Diff(tt.want, keys(trail)); d != "" {
				t.Fatalf("decisions (-want +got):\n%s", d)
			}
			st := e.State()
			require.Equal(t, a, st.Targets[1].Key)
			fails := st.Targets[1].Failures
			if tt.counted {
				require.Positive(t, fails, "failures counted for %s", a)
			} else {
				require.Zero(t, fails, "failures counted for %s", a)
			}
			ends := kinds(log.Events(), events.RequestEnd)
			require.Len(t, ends, 1)
			if final.Kind == Fail {
				require.Equal(t, events.OutcomeFailed, ends[0].Outcome)
				require.NotNil(t, final.Err)
				require.Equal(t, string(tt.class), ends[0].Class)
			} else {
				require.Equal(t, events.OutcomeServed, ends[0].Outcome)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

func TestContentFilterPropagatesProviderError(t *testing.T) {
	const a, b = "openai:gpt-4o", "anthropic:claude-sonnet"
	perr := &llm.Error{Status: 400, Type: llm.ErrContentFilter, Message: "flagged: violence"}
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "fallback_on_content_filter"}[fallback], func(t *testing.T) {
			cfg := oneRoute(tgt(a), tgt(b, prio(1)))
			cfg.Routes[0].FallbackOnContentFilter = fallback
			e := newEngine(t, cfg, nil)
			final, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{a: {Class: ContentFilter, Status: 400, Err: perr}}))
			if !fallback {
				require.Equal(t, []string{a, "fail"}, keys(trail))
				require.Equal(t, perr.Message, final.Err.Message)
				require.Equal(t, llm.ErrContentFilter, final.Err.Type)
				return
			}
			require.Equal(t, []string{a, b, "done"}, keys(trail))
		})
	}
}

func TestBadRequestParamFailsOverOnlyWhereAccepted(t *testing.T) {
	const a = "openai:gpt-4o"
	rej := Outcome{Class: BadRequestParam, Status: 400, Err: &llm.Error{Status: 400, Type: llm.ErrInvalidRequest, Param: "logprobs", Message: "unsupported"}}
	tests := []struct {
		name    string
		targets []Target
		want    []string
	}{
		{"same model elsewhere is skipped", []Target{tgt(a), tgt("azure:gpt-4o", prio(1))}, []string{a, "fail"}},
		{"same model that drops the param", []Target{tgt(a), tgt("azure:gpt-4o", prio(1), func(t *Target) { t.DropParams = []string{"logprobs"} })}, []string{a, "azure:gpt-4o", "done"}},
		{"another model", []Target{tgt(a), tgt("azure:gpt-4o", prio(1)), tgt("anthropic:claude", prio(2))}, []string{a, "anthropic:claude", "done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, oneRoute(tt.targets...), nil)
			final, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{a: rej}))
			require.Equal(t, tt.want, keys(trail))
			if final.Kind == Fail {
				require.Equal(t, "logprobs", final.Err.Param, "the provider's error is returned")
			}
		})
	}
}

func TestContextLength(t *testing.T) {
	small, same, big, huge := "openai:gpt-4o-mini", "azure:gpt-4o-mini", "anthropic:claude", "google:gemini"
	cfg := oneRoute(
		tgt(small, ctxWindow(16000)),
		tgt(same, prio(1), ctxWindow(32000)),
		tgt("openai:gpt-3.5", prio(1), ctxWindow(8000)),
		tgt(big, prio(2), ctxWindow(200000)),
		tgt(huge, prio(3), ctxWindow(1000000)),
	)
	t.Run("skips windows too small for the prompt", func(t *testing.T) {
		e := newEngine(t, cfg, nil)
		_, trail, _ := drive(e, t0, Request{PromptTokens: 20000}, ok)
		require.Equal(t, []string{same, "done"}, keys(trail))
	})
	t.Run("never resends to the same model and moves to a larger window", func(t *testing.T) {
		e := newEngine(t, cfg, nil)
		// the estimate said it fits; the provider disagrees
		_, trail, _ := drive(e, t0, Request{PromptTokens: 1000}, byTarget(map[string]Outcome{small: {Class: ContextLength, Status: 400}}))
		require.Equal(t, []string{small, big, "done"}, keys(trail))
	})
	t.Run("nothing larger: the provider's error", func(t *testing.T) {
		perr := &llm.Error{Status: 400, Type: llm.ErrContextLength, Message: "too long"}
		e := newEngine(t, oneRoute(tgt(big, ctxWindow(200000)), tgt(small, prio(1), ctxWindow(16000))), nil)
		final, trail, _ := drive(e, t0, Request{}, byTarget(map[string]Outcome{big: {Class: ContextLength, Status: 400, Err: perr}}))
		require.Equal(t, []string{big, "fail"}, keys(trail))
		require.Equal(t, *perr, *final.Err)
	})
}

// TestStatusMapping: every upstream status is a failover trigger or a
// final error by its class, and the client's error never carries a status
// that means something else to it (1xx, 3xx, 499).
func TestStatusMapping(t *testing.T) {
	const a, b = "openai:gpt-4o", "anthropic:claude-sonnet"
	tests := []struct {
		status   int
		class    Class
		failover bool // with a healthy fallback, the request is served by it
		client   int  // the client's status when every target answers status
	}{
		{101, ProtocolError, true, 502},
		{103, ProtocolError, true, 502},
		{301, ProtocolError, true, 502},
		{302, ProtocolError, true, 502},
		{307, ProtocolError, true, 502},
		{400, BadRequestParam, true, 400},
		{401, Auth, true, 401},
		{402, Rejected, true, 402},
		{403, Auth, true, 403},
		{404, Auth, true, 404},
		{405, Rejected, true, 405},
		{408, TimeoutTotal, true, 408},
		{409, Rejected, true, 409},
		{410, Rejected, true, 410},
		{413, ContextLength, true, 413},
		{418, Rejected, true, 418},
		{422, BadRequestParam, true, 422},
		{429, RateLimited, true, 429},
		{451, Rejected, true, 451},
		{499, UpstreamCanceled, true, 502},
		{500, ServerError, true, 500},
		{501, ServerError, false, 501}, // in neither status list
		{502, ServerError, true, 502},
		{503, Overloaded, true, 503},
		{504, TimeoutTotal, true, 504},
		{505, ServerError, false, 505},
		{529, Overloaded, true, 529},
		{599, ServerError, false, 599},
		{600, ProtocolError, true, 502},
	}
	for _, tt := range tests {
		t.Run(itoa(tt.status), func(t *testing.T) {
			c := Classify(tt.status, "")
			require.Equal(t, tt.class, c)
			// b's model differs, so a bad_request_param may move to it.
			cfg := oneRoute(tgt(a), tgt(b, prio(1)))
			fails := Outcome{Class: c, Status: tt.status, Err: &llm.Error{Status: tt.status, Type: llm.TypeForStatus(tt.status), Message: "upstream says no"}}
			_, trail, _ := drive(newEngine(t, cfg, nil), t0, Request{ID: "r1"}, byTarget(map[string]Outcome{a: fails}))
			got := keys(trail)
			served := got[len(got)-1] == "done" && slices.Contains(got, b)
			require.Equal(t, tt.failover, served, "decisions %v", got)

			// Alone on its route: a failover trigger ends in the honest 503
			// naming the class, a final error (or one not held against the
			// target: the request's own fault) is the upstream's.
			final, trail, _ := drive(newEngine(t, oneRoute(tgt(a)), nil), t0, Request{ID: "r2"}, byTarget(map[string]Outcome{a: fails}))
			require.Equal(t, Fail, final.Kind, "decisions %v", keys(trail))
			if tt.failover && !c.info().ignore {
				require.Equal(t, 503, final.Err.Status)
				require.Contains(t, final.Err.Message, "last outcome "+string(c))
			} else {
				require.Equal(t, tt.status, final.Err.Status)
				require.Equal(t, "upstream says no", final.Err.Message)
			}

			// A request that may not be resent ends with the upstream's
			// error, in a status that means the same to the client.
			fails.BytesSent = true
			final, trail, _ = drive(newEngine(t, cfg, nil), t0, Request{ID: "r3", NonRetryable: true}, byTarget(map[string]Outcome{a: fails}))
			require.Equal(t, []string{a, "fail"}, keys(trail))
			require.Equal(t, tt.client, final.Err.Status)
			require.Equal(t, "upstream says no", final.Err.Message)
		})
	}
}
