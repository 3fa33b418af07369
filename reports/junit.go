package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"

	"github.com/brownout-dev/brownout/scenarios/score"
)

// The JUnit XML shape most CI systems read (Jenkins, GitLab, GitHub actions
// reporters): testsuites > testsuite > testcase, with failure children.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes JUnit XML with one test case per expectation, so CI
// systems list them. An aborted run adds an errored "run" case.
func WriteJUnit(w io.Writer, r *score.Result) error {
	suite := junitSuite{
		Name: "gameday." + r.Scenario,
		Time: fmt.Sprintf("%.3f", r.Elapsed.Seconds()),
		Properties: []junitProperty{
			{Name: "mode", Value: string(r.Mode)},
			{Name: "seed", Value: fmt.Sprint(r.Seed)},
		},
	}
	if !r.Start.IsZero() && r.Mode == score.ModeLive {
		suite.Timestamp = r.Start.UTC().Format("2006-01-02T15:04:05")
	}
	for _, k := range sortedKeys(r.Versions) {
		suite.Properties = append(suite.Properties, junitProperty{Name: "version." + k, Value: r.Versions[k]})
	}
	for _, v := range r.Expectations {
		name := v.Name
		if v.Step != "" {
			name += " [" + v.Step + "]"
		}
		if v.Target != "" {
			name += " " + v.Target
		}
		c := junitCase{Name: name, Classname: "gameday." + r.Scenario, Time: "0"}
		if !v.Pass {
			c.Failure = &junitFailure{Message: fmt.Sprintf("want %s, got %s", v.Want, v.Got), Type: "expectation", Text: fmt.Sprintf("%s: want %s, got %s", name, v.Want, v.Got)}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	if r.Aborted {
		suite.Cases = append(suite.Cases, junitCase{Name: "run", Classname: "gameday." + r.Scenario, Time: suite.Time,
			Error: &junitFailure{Message: "aborted: " + r.AbortReason, Type: "aborted", Text: r.AbortReason}})
		suite.Errors++
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: "brownout", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
