package events

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/brownout-dev/brownout/internal/jsonstr"
)

// appendJSON appends e as encoding/json encodes it (the same bytes: field
// order, omitempty, HTML-safe string escapes, ES6 float format, RFC 3339
// times), without reflection: a simulated game day writes millions of
// events. Values encoding/json refuses (NaN or infinite floats, years
// outside 0–9999) are left to it, so the error is its own.
func appendJSON(dst []byte, e *Event) ([]byte, error) {
	var enc jsonEncoder
	return enc.append(dst, e)
}

// jsonEncoder is appendJSON for a sequence of events, remembering what
// consecutive events repeat: the second their times fall in (its date and
// zone formatted once) and the JSON of their kind, route, target, tier,
// class and outcome. The zero value is ready to use.
type jsonEncoder struct {
	sec  int64
	loc  *time.Location
	head []byte // the second as RFC 3339 up to the seconds; nil for none
	zone []byte // its zone suffix ("Z", "+01:00")
	strs [numJSONStrs]struct {
		s string
		b []byte
	}
}

// The fields whose last JSON string jsonEncoder keeps.
const (
	jKind = iota
	jRoute
	jTarget
	jTier
	jClass
	jOutcome
	numJSONStrs
)

func (c *jsonEncoder) append(dst []byte, e *Event) ([]byte, error) {
	sec, loc := e.Time.Unix(), e.Time.Location()
	cached := c.head != nil && sec == c.sec && loc == c.loc
	if !finite(e.Cost) || !finite(e.Value) || (!cached && (e.Time.Year() < 0 || e.Time.Year() > 9999)) {
		b, err := json.Marshal(e)
		return append(dst, b...), err
	}
	if !cached {
		// RFC 3339 of the whole second: the date and time, then the zone.
		c.head = e.Time.Add(-time.Duration(e.Time.Nanosecond())).AppendFormat(c.head[:0], time.RFC3339Nano)
		c.zone = append(c.zone[:0], c.head[len("2006-01-02T15:04:05"):]...)
		c.head = c.head[:len("2006-01-02T15:04:05")]
		c.sec, c.loc = sec, loc
	}
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = append(dst, c.head...)
	dst = appendFraction(dst, e.Time.Nanosecond())
	dst = append(dst, c.zone...)
	dst = append(dst, `","kind":`...)
	dst = c.appendString(dst, jKind, string(e.Kind))
	dst = appendStr(dst, `,"request_id":`, e.RequestID)
	dst = c.appendStr(dst, jRoute, `,"route":`, e.Route)
	dst = c.appendStr(dst, jTarget, `,"target":`, e.Target)
	dst = c.appendStr(dst, jTier, `,"tier":`, e.Tier)
	dst = appendInt(dst, `,"attempt":`, int64(e.Attempt))
	if e.Stream {
		dst = append(dst, `,"stream":true`...)
	}
	dst = appendStr(dst, `,"client":`, e.Client)
	dst = appendInt(dst, `,"replica":`, int64(e.Replica))
	dst = appendInt(dst, `,"status":`, int64(e.Status))
	dst = c.appendStr(dst, jClass, `,"class":`, e.Class)
	dst = c.appendStr(dst, jOutcome, `,"outcome":`, e.Outcome)
	dst = appendInt(dst, `,"ttft_ns":`, int64(e.TTFT))
	dst = appendInt(dst, `,"duration_ns":`, int64(e.Duration))
	dst = appendInt(dst, `,"input_tokens":`, int64(e.InputTokens))
	dst = appendInt(dst, `,"output_tokens":`, int64(e.OutputTokens))
	dst = appendInt(dst, `,"cached_tokens":`, int64(e.CachedTokens))
	dst = appendFloat(dst, `,"cost":`, e.Cost)
	dst = appendStr(dst, `,"from":`, e.From)
	dst = appendStr(dst, `,"to":`, e.To)
	dst = appendStr(dst, `,"reason":`, e.Reason)
	dst = appendStr(dst, `,"name":`, e.Name)
	dst = appendStr(dst, `,"severity":`, e.Severity)
	dst = appendStr(dst, `,"sink":`, e.Sink)
	if e.OK {
		dst = append(dst, `,"ok":true`...)
	}
	dst = appendFloat(dst, `,"value":`, e.Value)
	return append(dst, '}'), nil
}

// appendFraction writes nanoseconds as RFC3339Nano does: a dot and up to
// nine digits without trailing zeros, nothing for none.
func appendFraction(dst []byte, ns int) []byte {
	if ns == 0 {
		return dst
	}
	var b [10]byte
	b[0] = '.'
	for i := 9; i >= 1; i-- {
		b[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 10
	for b[n-1] == '0' {
		n--
	}
	return append(dst, b[:n]...)
}

// appendString is appendString through the field's last string.
func (c *jsonEncoder) appendString(dst []byte, field int, s string) []byte {
	l := &c.strs[field]
	if s != l.s || l.b == nil {
		l.s, l.b = s, appendString(l.b[:0], s)
	}
	return append(dst, l.b...)
}

func (c *jsonEncoder) appendStr(dst []byte, field int, key, s string) []byte {
	if s == "" {
		return dst
	}
	return c.appendString(append(dst, key...), field, s)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func appendStr(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(append(dst, key...), s)
}

func appendInt(dst []byte, key string, v int64) []byte {
	if v == 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), v, 10)
}

// appendFloat writes a float64 as encoding/json does: like ES6, 'f' format
// unless the magnitude is below 1e-6 or at least 1e21, exponents unpadded.
func appendFloat(dst []byte, key string, f float64) []byte {
	if f == 0 {
		return dst
	}
	dst = append(dst, key...)
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendString writes s as encoding/json does by default (HTML-safe).
func appendString(dst []byte, s string) []byte { return jsonstr.Append(dst, s, true) }
