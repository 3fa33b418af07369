package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/mockprovider"
)

// ErrNotFound is returned when removing a fault that is not active.
var ErrNotFound = errors.New("no such fault")

// Error is a control API error: its HTTP status and message (a bad spec's
// message names the field).
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("mock control: %d: %s", e.Status, e.Message)
}

// Client talks to one mock provider's control API.
type Client struct {
	base string
	http *http.Client
}

// New returns a client for the provider at baseURL ("http://127.0.0.1:9101").
// A nil hc uses http.DefaultClient.
func New(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), http: hc}
}

// Faults returns the active faults with their counters.
func (c *Client) Faults(ctx context.Context) ([]faults.Active, error) {
	var out []faults.Active
	return out, c.do(ctx, http.MethodGet, "/_mock/faults", nil, &out)
}

// AddFault activates a fault and returns its id.
func (c *Client) AddFault(ctx context.Context, s faults.Spec) (string, error) {
	ids, err := c.AddFaults(ctx, s)
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// AddFaults activates several faults at once (all or none) and returns their ids.
func (c *Client) AddFaults(ctx context.Context, specs ...faults.Spec) ([]string, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	var out mockprovider.AddFaultsResponse
	if err := c.do(ctx, http.MethodPost, "/_mock/faults", specs, &out); err != nil {
		return nil, err
	}
	if len(out.IDs) != len(specs) {
		return nil, fmt.Errorf("mock control: %d faults added, %d ids returned", len(specs), len(out.IDs))
	}
	return out.IDs, nil
}

// RemoveFault deactivates a fault; ErrNotFound if it is not active.
func (c *Client) RemoveFault(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodDelete, "/_mock/faults/"+url.PathEscape(id), nil, nil)
	var ce *Error
	if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return err
}

// ClearFaults removes every fault.
func (c *Client) ClearFaults(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/_mock/faults", nil, nil)
}

// Reset removes every fault and clears the journal, the statistics and the
// prompt cache.
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/_mock/reset", nil, nil)
}

// Journal returns the attempts journaled after sequence number since (0: all).
func (c *Client) Journal(ctx context.Context, since uint64) ([]mockprovider.JournalEntry, error) {
	var out []mockprovider.JournalEntry
	path := "/_mock/journal"
	if since > 0 {
		path += "?since=" + strconv.FormatUint(since, 10)
	}
	return out, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Attempts returns the journaled attempts of one request (by x-request-id).
func (c *Client) Attempts(ctx context.Context, requestID string) ([]mockprovider.JournalEntry, error) {
	var out []mockprovider.JournalEntry
	return out, c.do(ctx, http.MethodGet, "/_mock/journal?request_id="+url.QueryEscape(requestID), nil, &out)
}

// Stats returns the provider's counters.
func (c *Client) Stats(ctx context.Context) (mockprovider.Stats, error) {
	var out mockprovider.Stats
	return out, c.do(ctx, http.MethodGet, "/_mock/stats", nil, &out)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("mock control: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("mock control: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("mock control: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("mock control: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var ce mockprovider.ControlError
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &ce) == nil && ce.Error != "" {
			msg = ce.Error
		}
		return &Error{Status: resp.StatusCode, Message: msg}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("mock control: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}
