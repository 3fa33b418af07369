package faults

import "strings"

// kind describes one fault kind: the parameters it accepts, its own checks,
// and how to build it from a Spec.
type kind struct {
	name   Kind
	params []string
	check  func(*Spec) error
	build  func(*Spec) Fault
}

// kinds is the explicit table of fault kinds, in the order faults are applied
// when several select the same request (see Set.Apply):
//
//  1. rejections a real provider makes before doing any work: auth_failure,
//     reject_param, context_length;
//  2. transport and status failures: http_error, reset, no_response;
//  3. content: refusal, content_filter, quality_drop, malformed_json_content,
//     empty_tool_args, then truncate (so a truncation cuts the final content);
//  4. timing: token_rate (re-paces tokens), ttft, slow_headers (shift them);
//  5. stream shape: stall, cut, malformed_chunk, missing_done.
//
// A plan that has become terminal (an error status, a reset or a hold) is
// not transformed further.
var kinds = []kind{
	{name: KindAuthFailure, params: []string{"message"}, build: buildAuthFailure},
	{name: KindRejectParam, params: []string{"param", "message"}, build: buildRejectParam},
	{name: KindContextLength, params: []string{"window", "message"}, check: checkContextLength, build: buildContextLength},
	{name: KindHTTPError, params: []string{"status", "retry_after", "message", "error_type", "after"}, check: checkHTTPError, build: buildHTTPError},
	{name: KindReset, build: buildReset},
	{name: KindNoResponse, params: []string{"for"}, check: checkNoResponse, build: buildNoResponse},
	{name: KindRefusal, params: []string{"text"}, build: buildRefusal},
	{name: KindContentFilter, params: []string{"stage", "after", "message"}, check: checkContentFilter, build: buildContentFilter},
	{name: KindQualityDrop, build: buildQualityDrop},
	{name: KindMalformedJSONContent, build: buildMalformedJSONContent},
	{name: KindEmptyToolArgs, build: buildEmptyToolArgs},
	{name: KindTruncate, params: []string{"at"}, build: buildTruncate},
	{name: KindTokenRate, params: []string{"rate", "jitter"}, check: checkTokenRate, build: buildTokenRate},
	{name: KindTTFT, params: []string{"delay", "mode"}, check: checkTTFT, build: buildTTFT},
	{name: KindSlowHeaders, params: []string{"delay"}, check: checkSlowHeaders, build: buildSlowHeaders},
	{name: KindStall, params: []string{"after", "for", "close"}, check: checkStall, build: buildStall},
	{name: KindCut, params: []string{"after"}, build: buildCut},
	{name: KindMalformedChunk, params: []string{"at"}, build: buildMalformedChunk},
	{name: KindMissingDone, build: buildMissingDone},
}

// Kinds returns every fault kind, in application order.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// Params returns the parameters a kind accepts, by YAML name.
func Params(k Kind) []string {
	if ki, ok := lookup(k); ok {
		return append([]string(nil), ki.params...)
	}
	return nil
}

func lookup(k Kind) (*kind, bool) {
	for i := range kinds {
		if kinds[i].name == k {
			return &kinds[i], true
		}
	}
	return nil, false
}

func order(k Kind) int {
	for i := range kinds {
		if kinds[i].name == k {
			return i
		}
	}
	return len(kinds)
}

func kindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k.name)
	}
	return strings.Join(names, ", ")
}

// New validates s and builds its fault.
func New(s Spec) (Fault, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	k, _ := lookup(s.Kind)
	return k.build(&s), nil
}
