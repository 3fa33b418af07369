// Package reports renders a game day's [score.Result]: a terminal
// scorecard (coloured on a terminal, plain when piped or with NO_COLOR;
// at most [ScorecardWidth] columns), Markdown for a ticket or postmortem,
// one self-contained HTML file with SVG charts over the scenario's time,
// JUnit XML with one test case per expectation, the diff of two runs, the
// trend across many, and a bake-off's scores side by side ([WriteCompare],
// with the contestants' charts overlaid in [WriteCompareHTML]).
//
// Every format prints a measured duration as [score.FormatDuration]
// does (the rounding of the verdicts), names the targets a run's flaps
// come from, and groups the event timeline: consecutive events that read
// the same are one row with a count, and per-request events (tier.served,
// budget.exhausted) one row per target between two other events. Charts
// tick at round values and place their labels where no other text is.
//
// It reads only the result type: everything it shows is in result.json, so
// a report can be rendered again from a stored run.
package reports
