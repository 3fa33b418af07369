package control_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/mockprovider/control"
	"github.com/brownout-dev/brownout/yamlfile"
)

func start(t *testing.T) (*mockprovider.Provider, *control.Client) {
	t.Helper()
	p := mockprovider.StartTest(t, mockprovider.ProviderSpec{
		Name: "openai", Format: llm.FormatOpenAI,
		Models: []mockprovider.ModelSpec{{Name: "gpt-4o", OutputTokens: mockprovider.Length{Fixed: 10}}},
	})
	return p, control.New(p.URL, nil)
}

func chat(t *testing.T, url, requestID string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Request-Id", requestID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestClient(t *testing.T) {
	ctx := context.Background()
	p, c := start(t)
	p50 := yamlfile.Percent(1)
	d := faults.Latency{Median: yamlfile.Duration(time.Second), P99: yamlfile.Duration(3 * time.Second)}
	ids, err := c.AddFaults(ctx,
		faults.Spec{Kind: faults.KindHTTPError, Status: 503, RetryAfter: yamlfile.Duration(2 * time.Second),
			Selector: faults.Selector{Model: "gpt-4o", Probability: &p50, Header: map[string]string{"x-request-id": "r1"}}},
		faults.Spec{Kind: faults.KindTTFT, Delay: &d, ID: "slow", Selector: faults.Selector{Header: map[string]string{"x-request-id": "never"}}},
	)
	if err != nil || len(ids) != 2 || ids[1] != "slow" {
		t.Fatalf("ids %v err %v", ids, err)
	}
	if got := chat(t, p.URL, "r1"); got != 503 {
		t.Fatalf("status %d", got)
	}
	if got := chat(t, p.URL, "r2"); got != 200 {
		t.Fatalf("status %d", got)
	}
	active, err := c.Faults(ctx)
	if err != nil || len(active) != 2 || active[0].Applied != 1 || active[0].Spec.RetryAfter.D() != 2*time.Second ||
		active[1].Spec.Delay.P99.D() != 3*time.Second || active[0].Spec.Probability.F() != 1 {
		t.Fatalf("%+v %v", active, err)
	}
	j, err := c.Journal(ctx, 0)
	if err != nil || len(j) != 2 || j[0].RequestID != "r1" || j[0].Fault != "http_error" || j[0].Status != 503 || j[1].Outcome != mockprovider.OutcomeOK {
		t.Fatalf("%+v %v", j, err)
	}
	if later, _ := c.Journal(ctx, j[0].Seq); len(later) != 1 || later[0].RequestID != "r2" {
		t.Fatalf("since: %+v", later)
	}
	if one, _ := c.Attempts(ctx, "r2"); len(one) != 1 || one[0].TokensSent != 10 {
		t.Fatalf("attempts: %+v", one)
	}
	st, err := c.Stats(ctx)
	if err != nil || st.Requests != 2 || st.ByStatus[503] != 1 || st.Faults != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	if err := c.RemoveFault(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveFault(ctx, ids[0]); !errors.Is(err, control.ErrNotFound) {
		t.Fatalf("second remove: %v", err)
	}
	if err := c.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := c.Journal(ctx, 0); len(j) != 0 {
		t.Fatalf("journal after reset: %+v", j)
	}
}

func TestClientBadSpec(t *testing.T) {
	_, c := start(t)
	_, err := c.AddFault(context.Background(), faults.Spec{Kind: faults.KindStall})
	var ce *control.Error
	if !errors.As(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Message, "for: required") {
		t.Fatalf("got %v", err)
	}
}

func TestControlAcceptsYAML(t *testing.T) {
	p, c := start(t)
	resp, err := http.Post(p.URL+"/_mock/faults", "application/yaml", strings.NewReader("- {kind: reset, first: 1}\n- {kind: cut, after: 2}\n"))
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	resp, _ = http.Post(p.URL+"/_mock/faults", "application/yaml", strings.NewReader("{kind: reset, frist: 1}"))
	if resp.StatusCode != 400 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp.Body.Close()
	if active, _ := c.Faults(context.Background()); len(active) != 2 {
		t.Fatalf("%+v", active)
	}
}
