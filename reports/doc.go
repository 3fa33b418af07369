// Package reports renders a game day's [score.Result]: a terminal
// scorecard (coloured on a terminal, plain when piped or with NO_COLOR;
// at most [ScorecardWidth] columns), Markdown for a ticket or postmortem,
// one self-contained HTML file with SVG charts over the scenario's time,
// JUnit XML with one test case per expectation, the diff of two runs, the
// trend across many, and a bake-off's scores side by side ([WriteCompare],
// with the contestants' charts overlaid in [WriteCompareHTML]).
//
// Every format prints a measured duration as [score.FormatDuration]
// does (the rounding of the verdicts; inter-token times, tens of
// milliseconds, to the millisecond), prints a measured 0 as 0 and "–" only
// for what was not measured (no sample, no baseline, no prices), names the
// targets a run's flaps come from, and groups the event timeline:
// consecutive events that read the same are one row with a count, and
// per-request events (tier.served, budget.exhausted) one row per target
// between two other events. When result.json kept fewer notable events
// than the run had ([score.MaxTimeline]), every format says how many, up
// to when, and that events.jsonl has them all. The HTML report puts the
// expectations, failing first, above its charts, and pages its timeline.
// Charts tick at round values, draw the SLO's bounds, and place their
// labels where no other text is.
//
// It reads only the result type: everything it shows is in result.json, so
// a report can be rendered again from a stored run.
package reports
