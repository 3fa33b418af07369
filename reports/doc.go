// Package reports renders a game day's [scenarios.Result]: a terminal
// scorecard (coloured on a terminal, plain when piped or with NO_COLOR),
// Markdown for a ticket or postmortem, one self-contained HTML file with SVG
// charts over the scenario's time, JUnit XML with one test case per
// expectation, the diff of two runs and the trend across many, and a
// bake-off's scores side by side ([WriteCompare], with the contestants'
// charts overlaid in [WriteCompareHTML]).
//
// It reads only the result type: everything it shows is in result.json, so
// a report can be rendered again from a stored run.
package reports
