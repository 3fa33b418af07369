package mockprovider_test

import (
	"context"
	"errors"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/yamlfile"
)

// startProxy starts an upstream mock and a proxy mock in front of it.
func startProxy(t *testing.T, upstreamFaults []faults.Spec, proxyFaults ...faults.Spec) (up, px *mockprovider.Provider, c oai.Client) {
	t.Helper()
	us := spec("upstream", llm.FormatOpenAI, "gpt-4o")
	us.Faults = upstreamFaults
	up = mockprovider.StartTest(t, us)
	px = mockprovider.StartTest(t, mockprovider.ProviderSpec{Name: "proxy", Format: llm.FormatOpenAI, ProxyTo: up.URL, Faults: proxyFaults})
	c = oai.NewClient(option.WithBaseURL(px.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	return up, px, c
}

func TestProxy(t *testing.T) {
	ctx := context.Background()
	t.Run("pass-through", func(t *testing.T) {
		up, px, c := startProxy(t, nil)
		resp, err := c.Chat.Completions.New(ctx, chatParams("What is the capital of France?"))
		if err != nil || resp.Choices[0].Message.Content != "The capital of France is Paris." {
			t.Fatalf("%v %+v", err, resp)
		}
		r := openAIStream(t, c, chatParams("hi"))
		if r.err != nil || r.chunks != 40 || r.finish != "stop" || r.usage.CompletionTokens != 40 {
			t.Fatalf("%+v", r)
		}
		if n := len(up.Model().Journal()); n != 2 {
			t.Fatalf("upstream saw %d requests", n)
		}
		// The SDK returns at data: [DONE]; the proxy may still be copying
		// the end of the body, and journals the outcome after that.
		if j := finishedJournal(px.Model()); len(j) != 2 || j[1].Outcome != mockprovider.OutcomeOK || j[1].Status != 200 {
			t.Fatalf("proxy journal %+v", j)
		}
	})
	t.Run("terminal fault never reaches the upstream", func(t *testing.T) {
		up, _, c := startProxy(t, nil, faults.Spec{Kind: faults.KindHTTPError, Status: 429, RetryAfter: yamlfile.Duration(time.Second)})
		_, err := c.Chat.Completions.New(ctx, chatParams("hi"))
		var e *oai.Error
		if !errors.As(err, &e) || e.StatusCode != 429 || e.Response.Header.Get("Retry-After") != "1" {
			t.Fatalf("got %v", err)
		}
		if n := len(up.Model().Journal()); n != 0 {
			t.Fatalf("upstream saw %d requests", n)
		}
	})
	t.Run("upstream errors pass through", func(t *testing.T) {
		_, px, c := startProxy(t, []faults.Spec{{Kind: faults.KindHTTPError, Status: 503}})
		_, err := c.Chat.Completions.New(ctx, chatParams("hi"))
		var e *oai.Error
		if !errors.As(err, &e) || e.StatusCode != 503 {
			t.Fatalf("got %v", err)
		}
		if j := px.Model().Journal(); j[0].Status != 503 || j[0].Outcome != mockprovider.OutcomeError {
			t.Fatalf("%+v", j[0])
		}
	})
	t.Run("truncate a real stream", func(t *testing.T) {
		_, px, c := startProxy(t, nil, faults.Spec{Kind: faults.KindTruncate, At: intp(5)})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err != nil || r.chunks != 5 || r.finish != "length" || r.usage.CompletionTokens != 5 {
			t.Fatalf("%+v", r)
		}
		if j := px.Model().Journal(); j[0].Fault != "truncate" || !j[0].Corrupted || j[0].TokensSent != 5 {
			t.Fatalf("%+v", j[0])
		}
	})
	t.Run("cut a real stream", func(t *testing.T) {
		_, _, c := startProxy(t, nil, faults.Spec{Kind: faults.KindCut, After: intp(3)})
		r := openAIStream(t, c, chatParams("hi"))
		if r.err == nil || r.chunks != 3 || r.finish != "" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("cut a buffered stream at half", func(t *testing.T) {
		_, px, c := startProxy(t, nil, faults.Spec{Kind: faults.KindCut}) // default after: needs the whole answer
		r := openAIStream(t, c, chatParams("hi"))
		if r.err == nil || r.chunks != 20 || r.finish != "" {
			t.Fatalf("%+v", r)
		}
		if j := px.Model().Journal(); j[0].Outcome != mockprovider.OutcomeCut || j[0].TokensSent != 20 {
			t.Fatalf("%+v", j[0])
		}
	})
	t.Run("refuse a real answer", func(t *testing.T) {
		_, _, c := startProxy(t, nil, faults.Spec{Kind: faults.KindRefusal})
		resp, err := c.Chat.Completions.New(ctx, chatParams("What is the capital of France?"))
		if err != nil || resp.Choices[0].Message.Content != faults.DefaultRefusal {
			t.Fatalf("%v %+v", err, resp)
		}
	})
}

// finishedJournal returns m's journal once no attempt in it is pending, or
// after 5 seconds as it is then.
func finishedJournal(m *mockprovider.Model) []mockprovider.JournalEntry {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		j := m.Journal()
		pending := false
		for _, e := range j {
			pending = pending || e.Outcome == mockprovider.OutcomePending
		}
		if !pending || time.Now().After(deadline) {
			return j
		}
	}
}
