package faults

// MissingDone ends a stream after its finish and usage events but without
// the end marker (OpenAI data: [DONE], Anthropic message_stop). Gemini
// streams have no end marker, so it changes nothing there. Non-streamed
// answers are untouched.
type MissingDone struct{}

// Apply drops the end marker.
func (MissingDone) Apply(p *Plan, _ *Env) { p.NoDone = true }

func buildMissingDone(*Spec) Fault { return MissingDone{} }
