package yamlfile

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// BasePortEnv is the environment variable that moves every port of
// brownout's files at once: a file writes a loopback address as
// "127.0.0.1:${BROWNOUT_BASE_PORT+1101}" and reads it as the base plus
// 1101. Unset, the base is DefaultBasePort (the example files then listen on
// the ports their comments name). `--base-port` sets it for one command.
const BasePortEnv = "BROWNOUT_BASE_PORT"

// DefaultBasePort is the base when BasePortEnv is unset: the examples' mocks
// on 9101-9103 (+1101...), the local gateway on 8080 (+80).
const DefaultBasePort = 8000

var rePort = regexp.MustCompile(`\$\{BROWNOUT_BASE_PORT(?:\+([^}]*))?\}`)

// BasePort is the base port from the environment (BasePortEnv) or
// DefaultBasePort.
func BasePort() (int, error) {
	v, ok := os.LookupEnv(BasePortEnv)
	if !ok || v == "" {
		return DefaultBasePort, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%s=%q is not a port number (1-65535)", BasePortEnv, v)
	}
	return p, nil
}

// edit is one placeholder replaced on a line: at byte column col (1-based)
// of the written file, old bytes became new.
type edit struct{ col, old, new int }

// expandPorts replaces each ${BROWNOUT_BASE_PORT} and
// ${BROWNOUT_BASE_PORT+N} in data with the port, and returns what it
// replaced by line, so positions can be given in the written file's terms.
func expandPorts(file string, data []byte) ([]byte, map[int][]edit, *Error) {
	if !bytes.Contains(data, []byte("${BROWNOUT_BASE_PORT")) {
		return data, nil, nil
	}
	base, baseErr := BasePort()
	edits := map[int][]edit{}
	var out bytes.Buffer
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		last := 0
		for _, m := range rePort.FindAllSubmatchIndex(line, -1) {
			col := m[0] + 1
			pos := func(format string, args ...any) *Error {
				return &Error{File: file, Line: i + 1, Col: col, Msg: fmt.Sprintf(format, args...)}
			}
			if baseErr != nil {
				return nil, nil, pos("%v", baseErr)
			}
			port := base
			if m[2] >= 0 {
				off, err := strconv.Atoi(string(line[m[2]:m[3]]))
				if err != nil || off < 0 {
					return nil, nil, pos("%s: want ${%s+N}, N a whole number of 0 or more", line[m[0]:m[1]], BasePortEnv)
				}
				port += off
			}
			if port > 65535 {
				return nil, nil, pos("%s is port %d with %s=%d: past 65535; choose a lower base", line[m[0]:m[1]], port, BasePortEnv, base)
			}
			s := strconv.Itoa(port)
			out.Write(line[last:m[0]])
			out.WriteString(s)
			last = m[1]
			edits[i+1] = append(edits[i+1], edit{col: col, old: m[1] - m[0], new: len(s)})
		}
		out.Write(line[last:])
	}
	return out.Bytes(), edits, nil
}

// writtenCol maps a column of the expanded line back to the column in the
// file as written.
func writtenCol(edits map[int][]edit, line, col int) int {
	shift := 0
	for _, e := range edits[line] {
		// e.col is in written terms; where it lands once the earlier
		// edits on the line are applied:
		at := e.col - shift
		if col < at+e.new {
			if col >= at {
				return at + shift // inside a replaced number: its placeholder
			}
			break
		}
		shift += e.old - e.new
	}
	return col + shift
}

// fixColumns moves every node of n (and errors es) from expanded-line
// columns to the columns of the file as written.
func fixColumns(n *yaml.Node, edits map[int][]edit) {
	if n == nil || len(edits) == 0 {
		return
	}
	if _, ok := edits[n.Line]; ok {
		n.Column = writtenCol(edits, n.Line, n.Column)
	}
	for _, c := range n.Content {
		fixColumns(c, edits)
	}
}
