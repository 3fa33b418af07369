package faults

// SlowHeaders delays the response headers by a latency drawn from Delay;
// everything after them (tokens, the body) moves by the same amount.
type SlowHeaders struct {
	Delay Latency
}

// Apply delays the headers and shifts the tokens.
func (f SlowHeaders) Apply(p *Plan, e *Env) {
	d := f.Delay.Sample(e.Rand)
	p.HeaderDelay += d
	p.Shift(d)
}

func checkSlowHeaders(s *Spec) error {
	if s.Delay == nil || s.Delay.IsZero() {
		return fieldErr("delay", "required: the header delay (e.g. 5s or {min: 1s, max: 5s})")
	}
	if err := s.Delay.Validate(); err != nil {
		return prefixField("delay", err)
	}
	return nil
}

func buildSlowHeaders(s *Spec) Fault { return SlowHeaders{Delay: *s.Delay} }

// prefixField nests a FieldError under parent ("delay.median").
func prefixField(parent string, err error) error {
	if fe, ok := err.(*FieldError); ok {
		return &FieldError{Field: parent + "." + fe.Field, Msg: fe.Msg}
	}
	return &FieldError{Field: parent, Msg: err.Error()}
}
