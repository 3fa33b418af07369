package evals

import "reflect"

// ReloadDetectors returns the output detectors a configuration runs with,
// for the live gateway and the simulator alike: old, with the baselines it
// learned, when the detector settings are unchanged (oldCfg; nil on the
// first load); new ones otherwise; nil when detectors are disabled.
func ReloadDetectors(old *Detectors, oldCfg *DetectorConfig, cfg DetectorConfig, disabled bool) *Detectors {
	if disabled {
		return nil
	}
	if old != nil && oldCfg != nil && reflect.DeepEqual(*oldCfg, cfg) {
		return old
	}
	return NewDetectors(cfg)
}
