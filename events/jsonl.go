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
	if !finite(e.Cost) || !finite(e.Value) || e.Time.Year() < 0 || e.Time.Year() > 9999 {
		b, err := json.Marshal(e)
		return append(dst, b...), err
	}
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = e.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","kind":`...)
	dst = appendString(dst, string(e.Kind))
	dst = appendStr(dst, `,"request_id":`, e.RequestID)
	dst = appendStr(dst, `,"route":`, e.Route)
	dst = appendStr(dst, `,"target":`, e.Target)
	dst = appendStr(dst, `,"tier":`, e.Tier)
	dst = appendInt(dst, `,"attempt":`, int64(e.Attempt))
	if e.Stream {
		dst = append(dst, `,"stream":true`...)
	}
	dst = appendInt(dst, `,"status":`, int64(e.Status))
	dst = appendStr(dst, `,"class":`, e.Class)
	dst = appendStr(dst, `,"outcome":`, e.Outcome)
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
