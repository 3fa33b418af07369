package scenarios

import (
	"encoding/json"

	"github.com/brownout-dev/brownout/faults"
)

// Schema returns the JSON Schema (draft 2020-12) of scenario files, for
// editors (yaml-language-server: $schema=...). The loader stays the
// authority: it also checks what a schema cannot (targets exist, steps do
// not overlap, files resolve).
func Schema() []byte {
	obj := func(props map[string]any, required ...string) map[string]any {
		o := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	dur := map[string]any{"type": "string", "pattern": `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`, "description": `a duration like "30s", "2m", "250ms"`}
	pct := map[string]any{"oneOf": []any{
		map[string]any{"type": "string", "pattern": `^[0-9]+(\.[0-9]+)?%$`},
		map[string]any{"type": "number", "minimum": 0, "maximum": 1},
	}, "description": `a percentage like "25%" or a fraction like 0.25`}
	rate := map[string]any{"oneOf": []any{
		map[string]any{"type": "string", "pattern": `^[0-9]+(\.[0-9]+)?(/(s|m|min|h))?$`},
		map[string]any{"type": "number", "minimum": 0},
	}, "description": `requests per second: "20/s", "600/m", "3600/h"`}
	durBound := obj(map[string]any{"min": dur, "max": dur})
	numBound := obj(map[string]any{"min": map[string]any{"type": "number"}, "max": map[string]any{"type": "number"}})
	pctBound := obj(map[string]any{"min": pct, "max": pct})
	var kinds []any
	for _, k := range faults.Kinds() {
		kinds = append(kinds, string(k))
	}
	fault := map[string]any{"type": "object", "required": []string{"kind"},
		"properties":  map[string]any{"kind": map[string]any{"enum": kinds}},
		"description": "a fault spec as the mock providers take it (see package faults)"}
	stepExpect := obj(map[string]any{
		"ttd": durBound, "ttm": durBound, "ttr": durBound, "detected": map[string]any{"type": "boolean"},
		"detected_by": map[string]any{"type": "string", "pattern": "^(detector(:[a-z_]+)?|breaker|health|probe|traffic_shift|already_open)$",
			"description": "the detection source: detector:<name>, detector (any), breaker, health, probe, traffic_shift or already_open"},
		"availability": pctBound, "failed": pctBound, "bad_served": numBound, "cost_multiplier": numBound,
		"retry_amplification": numBound, "load_ratio": numBound, "latency_penalty": numBound, "flaps": numBound,
	})
	targetExpect := obj(map[string]any{
		"quality": pctBound, "share": pctBound, "flaps": numBound, "bad_served": numBound, "attempts": numBound,
	})
	s := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     "https://brownout.dev/schemas/scenario.schema.json",
		"title":   "brownout game-day scenario",
	}
	for k, v := range obj(map[string]any{
		"version":     map[string]any{"const": Version},
		"name":        map[string]any{"type": "string", "minLength": 1},
		"description": map[string]any{"type": "string"},
		"seed":        map[string]any{"type": "integer", "minimum": 0},
		"duration":    dur,
		"slo":         obj(map[string]any{"success_rate": pct, "window": dur}),
		"providers": obj(map[string]any{
			"file":   map[string]any{"type": "string"},
			"inline": map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "mock provider specs, as in a providers file"},
		}),
		"gateway": obj(map[string]any{
			"config":      map[string]any{"type": "string", "description": "a gateway config file, run in-process"},
			"routes":      map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "inline routes (gateway/policy)"},
			"policy":      map[string]any{"type": "object", "description": "inline policy settings (gateway/policy)"},
			"alert_rules": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
			"url":         map[string]any{"type": "string", "pattern": "^https?://", "description": "an external gateway driven as a black box"},
			"format":      map[string]any{"enum": []any{"openai", "anthropic"}},
			"primary":     map[string]any{"type": "string"},
		}),
		"traffic": map[string]any{"type": "array", "minItems": 1, "items": obj(map[string]any{
			"route":          map[string]any{"type": "string"},
			"rate":           rate,
			"ramp":           obj(map[string]any{"from": rate, "to": rate, "over": dur}, "to", "over"),
			"schedule":       map[string]any{"type": "array", "items": obj(map[string]any{"at": dur, "rate": rate}, "at", "rate")},
			"arrival":        map[string]any{"enum": []any{"poisson", "uniform"}},
			"stream":         pct,
			"structured":     pct,
			"prompts":        obj(map[string]any{"file": map[string]any{"type": "string"}, "inline": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}),
			"prompt_tokens":  map[string]any{"type": "integer", "minimum": 0},
			"max_tokens":     map[string]any{"type": "integer", "minimum": 0},
			"temperature":    map[string]any{"type": "number"},
			"client_timeout": dur,
			"format":         map[string]any{"enum": []any{"openai", "anthropic"}},
		}, "route")},
		"timeline": map[string]any{"type": "array", "items": obj(map[string]any{
			"name":      map[string]any{"type": "string", "minLength": 1},
			"at":        dur,
			"for":       dur,
			"target":    map[string]any{"type": "string", "description": `"provider/model" or "provider"`},
			"fault":     fault,
			"kill":      map[string]any{"type": "string", "description": "a provider to stop (restarted after for)"},
			"reload":    obj(map[string]any{"config": map[string]any{"type": "string"}}, "config"),
			"sink_down": map[string]any{"type": "string"},
		}, "name", "at")},
		"alerts": obj(map[string]any{"sinks": map[string]any{"type": "array", "items": obj(map[string]any{
			"name": map[string]any{"type": "string"}, "kind": map[string]any{"enum": []any{"webhook", "log"}},
		}, "name", "kind")}}),
		"stop_when": obj(map[string]any{"success_rate_below": pct, "for": dur}, "success_rate_below"),
		"expect": obj(map[string]any{
			"ttd": durBound, "ttm": durBound, "ttr": durBound, "load_ratio": numBound, "flaps": numBound,
			"availability": pctBound, "failed": pctBound, "degraded": pctBound, "bad_served": numBound,
			"cost_multiplier": numBound, "retry_amplification": numBound, "peak_retry_amplification": numBound,
			"latency_penalty": numBound, "ttft_p95": durBound, "fail_time_p95": durBound,
			"alerts": map[string]any{"type": "array", "items": obj(map[string]any{
				"name": map[string]any{"type": "string"}, "within": dur, "fired": map[string]any{"type": "boolean"},
				"delivered_to": map[string]any{"type": "string"}, "undelivered_to": map[string]any{"type": "string"},
			}, "name")},
			"steps":   map[string]any{"type": "object", "additionalProperties": stepExpect},
			"targets": map[string]any{"type": "object", "additionalProperties": targetExpect},
		}),
	}, "version", "name", "duration", "providers", "gateway", "traffic") {
		s[k] = v
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	return append(b, '\n')
}
