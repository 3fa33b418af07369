package score

// Detection is how a fault step's detection on one target came out. The
// four are told apart because they mean different things: a step not
// exercised (the target got no attempt) was neither detected nor missed,
// and one masked by an earlier step that still demoted the target was
// "not re-detected", not missed.
type Detection string

const (
	// Detected: a detection caused after the fault's start (TTD is set).
	Detected Detection = "detected"
	// NotDetected: the target was exercised and nothing detected the fault.
	NotDetected Detection = "not detected"
	// NotExercised: the target received no attempt and no detection
	// during the fault.
	NotExercised Detection = "not exercised"
	// NotReDetected: the target was already demoted by an earlier step as
	// the fault started, and no detection of this fault's kind followed.
	NotReDetected Detection = "not re-detected"
)

// Detection returns how the step's detection on its target came out.
func (f *FaultScore) Detection() Detection {
	switch {
	case f.NotExercised:
		return NotExercised
	case f.Detected:
		return Detected
	case f.Masked:
		return NotReDetected
	}
	return NotDetected
}
