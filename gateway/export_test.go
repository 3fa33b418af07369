package gateway

// EventCopies is eventCopies, for the black-box tests that hold a stream's
// charge to it.
const EventCopies = eventCopies
