// Package sse reads and writes server-sent events (the text/event-stream
// format of the WHATWG HTML standard) as the LLM providers use them.
//
// [Reader] accepts LF, CRLF and lone CR line endings, a leading UTF-8 byte
// order mark, comments, multi-line data, fields without a colon, and a final
// event that is not followed by a blank line. Events are bounded in size
// (1 MiB by default): a larger event is [ErrEventTooLarge] rather than an
// unbounded allocation. The reader is allocation-light: one string per event
// for the data, and none per line; [Reader.NextBytes] hands the data over
// in the reader's own buffer, without that string.
//
// [Writer] writes one event per Write call so that a caller can flush after
// each event. [EventError] is the typed error codecs return for an event whose
// payload they cannot parse; it carries the event's zero-based index.
package sse
