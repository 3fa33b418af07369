package scenarios

import (
	"context"
	"errors"
)

// ErrLiveUnavailable is returned by live runs this build cannot perform.
var ErrLiveUnavailable = errors.New("live mode is not available yet")

func runLive(ctx context.Context, s *Scenario, seed uint64, opts Options) (*Result, error) {
	return nil, ErrLiveUnavailable
}
