package promrules

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/brownout-dev/brownout/yamlfile"
)

// Rule is one alerting rule of a rule file.
type Rule struct {
	Name  string // the alert's name (alertname)
	Group string
	File  string
	Line  int // of the rule's alert: field
	Expr  string
	// For is how long the expression must hold before the alert fires;
	// KeepFiringFor how long a firing alert keeps firing after it stops
	// holding.
	For, KeepFiringFor time.Duration
	Labels             map[string]string
	// Severity is Labels["severity"].
	Severity string

	expr parser.Expr
}

// Rules are the alerting rules of one or more rule files, in file order.
// Recording rules are not evaluated (see the package doc).
type Rules struct {
	List []*Rule
}

var promParser = parser.NewParser(parser.Options{})

// Load reads Prometheus rule files as Prometheus does (strict YAML, every
// expression parsed). Every problem is collected and returned as
// yamlfile.Errors, each with its file, line and column.
func Load(paths ...string) (*Rules, error) {
	var (
		out  Rules
		errs yamlfile.Errors
	)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, &yamlfile.Error{File: p, Msg: err.Error()})
			continue
		}
		rs, es := Parse(p, data)
		errs = append(errs, es...)
		if rs != nil {
			out.List = append(out.List, rs.List...)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &out, nil
}

// Parse is Load of one file's content.
func Parse(file string, data []byte) (*Rules, yamlfile.Errors) {
	groups, perrs := rulefmt.Parse(data, false, model.UTF8Validation, promParser, promslog.NewNopLogger())
	if len(perrs) > 0 {
		var errs yamlfile.Errors
		seen := map[string]bool{}
		for _, e := range perrs {
			for _, pe := range positioned(file, e) {
				if pe.Line == 0 {
					pe.Line, pe.Col = locate(data, pe.Msg)
				}
				if k := pe.Error(); !seen[k] {
					seen[k] = true
					errs = append(errs, pe)
				}
			}
		}
		return nil, errs
	}
	lines := alertLines(data)
	var out Rules
	var errs yamlfile.Errors
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			expr, err := promParser.ParseExpr(r.Expr)
			if err != nil { // rulefmt parsed it already
				errs = append(errs, &yamlfile.Error{File: file, Field: r.Alert, Msg: err.Error()})
				continue
			}
			rl := &Rule{Name: r.Alert, Group: g.Name, File: file, Expr: r.Expr, expr: expr,
				For: time.Duration(r.For), KeepFiringFor: time.Duration(r.KeepFiringFor),
				Labels: map[string]string{}}
			for k, v := range g.Labels {
				rl.Labels[k] = v
			}
			for k, v := range r.Labels {
				rl.Labels[k] = v
			}
			rl.Severity = rl.Labels["severity"]
			if n := lines[r.Alert]; len(n) > 0 {
				rl.Line, lines[r.Alert] = n[0], n[1:]
			}
			for k, v := range rl.Labels {
				if strings.Contains(v, "{{") {
					errs = append(errs, &yamlfile.Error{File: file, Line: rl.Line, Field: r.Alert + ".labels." + k,
						Msg: "templated label values are not supported in game days (annotations may use templates)"})
				}
			}
			out.List = append(out.List, rl)
		}
	}
	return &out, errs
}

var reAlertLine = regexp.MustCompile(`^\s*-?\s*alert:\s*["']?([^"'#\s]+)`)

// alertLines are the lines of each alert: field, in order.
func alertLines(data []byte) map[string][]int {
	out := map[string][]int{}
	for i, l := range strings.Split(string(data), "\n") {
		if m := reAlertLine.FindStringSubmatch(l); m != nil {
			out[m[1]] = append(out[m[1]], i+1)
		}
	}
	return out
}

var (
	rePos     = regexp.MustCompile(`^(\d+):(\d+): (?:\d+:\d+: )?`)
	reYAMLPos = regexp.MustCompile(`line (\d+)(?::(\d+))?: `)
)

// positioned turns a rulefmt error into errors with a position: rulefmt
// prefixes semantic errors with "line:col: ", and the YAML decoder names
// "line N" in each of its messages.
func positioned(file string, err error) yamlfile.Errors {
	msg := err.Error()
	var re *rulefmt.Error
	if errors.As(err, &re) {
		if m := rePos.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			return yamlfile.Errors{{File: file, Line: line, Col: col, Msg: strings.TrimPrefix(msg, m[0])}}
		}
		return yamlfile.Errors{{File: file, Msg: msg}}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	var out yamlfile.Errors
	for part := range strings.SplitSeq(strings.TrimPrefix(msg, "unmarshal errors:\n"), "\n") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		e := &yamlfile.Error{File: file, Msg: part}
		if m := reYAMLPos.FindStringSubmatchIndex(part); m != nil {
			e.Line, _ = strconv.Atoi(part[m[2]:m[3]])
			if m[4] >= 0 {
				e.Col, _ = strconv.Atoi(part[m[4]:m[5]])
			}
			e.Msg = part[m[1]:]
		}
		out = append(out, e)
	}
	return out
}

var reQuoted = regexp.MustCompile(`"([^"]+)"`)

// locate finds the value an error without a position quotes (the YAML
// decoder gives none for a bad duration) in data: its line and column, or
// 0, 0.
func locate(data []byte, msg string) (line, col int) {
	qs := reQuoted.FindAllStringSubmatch(msg, -1)
	if len(qs) == 0 {
		return 0, 0
	}
	v := qs[len(qs)-1][1]
	for i, l := range strings.Split(string(data), "\n") {
		if k := strings.Index(l, v); k >= 0 {
			return i + 1, k + 1
		}
	}
	return 0, 0
}

// Names are the rules' alert names, each once, in order.
func (rs *Rules) Names() []string {
	var out []string
	for _, r := range rs.List {
		if !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}

// ParseExpr parses a PromQL expression (for stop conditions), with the
// error a user can act on.
func ParseExpr(s string) error {
	if _, err := promParser.ParseExpr(s); err != nil {
		return fmt.Errorf("promql: %w", err)
	}
	return nil
}
