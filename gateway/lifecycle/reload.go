package lifecycle

import (
	"reflect"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// Reload returns the engine that serves new requests after a configuration
// reload with cfg: old itself when cfg is old's configuration (kept: every
// breaker, health, budget and stat carries on), otherwise old.Reload's new
// engine, which takes over the breaker and health state of every target
// both configurations use. An invalid cfg is an error and old keeps
// serving. Requests in flight finish on the engine they began on.
func Reload(old *policy.Engine, cfg policy.Config, opts policy.Options) (eng *policy.Engine, kept bool, err error) {
	if reflect.DeepEqual(old.Config(), cfg) {
		return old, true, nil
	}
	eng, err = old.Reload(cfg, opts)
	if err != nil {
		return nil, false, err
	}
	return eng, false, nil
}

// ReloadReason is the reason a successful config.reload event gives.
func ReloadReason(kept bool) string {
	if kept {
		return "policy state kept"
	}
	return "policy state carried over"
}
