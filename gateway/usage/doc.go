// Package usage is metered usage: one Record per upstream attempt (failed
// attempts that consumed tokens included), appended to a JSONL file by a
// Writer, and summarised by Report over a time range, grouped by target,
// route or tier — "what did the fallback cost us during last Tuesday's
// outage".
package usage
