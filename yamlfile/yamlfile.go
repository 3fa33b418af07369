package yamlfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a YAML file, with its position. Its JSON form
// (`gameday validate --output json`) has the same parts, lowercase.
type Error struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"` // 1-based; 0 when unknown
	Col   int    `json:"col,omitempty"`  // 1-based; 0 when unknown
	Field string `json:"field,omitempty"`
	Msg   string `json:"message"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a file. Validators collect them instead of
// stopping at the first, so a user fixes a file in one pass.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// AsErrors returns the problems err holds, one Error each: its Errors, its
// one Error, or else err's message as a problem of file. It returns nil
// for a nil err.
func AsErrors(file string, err error) Errors {
	var es Errors
	var one *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &es):
		return es
	case errors.As(err, &one):
		return Errors{one}
	}
	return Errors{{File: file, Msg: err.Error()}}
}

// Err returns es as an error, or nil when it is empty.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Doc is a decoded file: its name and its node tree, so validators can report
// positions for semantic errors.
type Doc struct {
	File string
	Root *yaml.Node // the document's top node (a mapping for our files)

	typ reflect.Type // the Go type decoded into (for field names), or nil
	// edits are the base-port placeholders replaced, by line (ports.go).
	edits map[int][]edit
}

// ReadFile reads and strictly decodes a file into v.
func ReadFile(path string, v any) (*Doc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, data, v)
}

var (
	reLine         = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	reCol          = regexp.MustCompile(`^column (\d+): (.*)$`)
	reFieldMissing = regexp.MustCompile(`^field (\S+) not found in type `)
	reValue        = regexp.MustCompile("cannot unmarshal !!\\w+ `([^`]*)`")
	reAlreadySet   = regexp.MustCompile(`^mapping key "([^"]+)" already defined`)
)

// MaxSize is the largest file Decode reads: brownout's files are hand-written
// and small, and a YAML parser's memory grows many times faster than its
// input.
const MaxSize = 4 << 20

// Decode strictly decodes data (named file in errors) into v: unknown fields,
// duplicate keys, type mismatches and syntax errors are all errors with
// file:line:col. A decode error is Errors (every problem yaml.v3 reports).
// A value that fails to decode leaves its field unset and decoding goes on,
// so the returned Doc covers the whole file; pass the errors to Doc.Settle
// with the validation errors so a rejected value is reported once.
func Decode(file string, data []byte, v any) (*Doc, error) {
	if len(data) > MaxSize {
		return nil, Errors{{File: file, Msg: fmt.Sprintf("the file is %s; brownout reads YAML files of up to %s", size(len(data)), size(MaxSize))}}
	}
	if e := notUTF8(file, data); e != nil {
		return nil, Errors{e}
	}
	written := data
	data, edits, perr := expandPorts(file, data)
	if perr != nil {
		return nil, Errors{perr}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		e := syntaxError(file, written, err.Error())
		e.Col = writtenCol(edits, e.Line, e.Col)
		return nil, Errors{e}
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, Errors{{File: file, Line: 1, Col: 1, Msg: "empty document"}}
	}
	fixColumns(&root, edits)
	doc := &Doc{File: file, Root: root.Content[0], typ: reflect.TypeOf(v), edits: edits}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return doc, nil
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var es Errors
		for _, m := range te.Errors {
			es = append(es, doc.convert(m))
		}
		return doc, es
	}
	var ye *Error
	if errors.As(err, &ye) {
		ye.File = file
		return doc, Errors{ye}
	}
	return doc, Errors{doc.convert(err.Error())}
}

func size(n int) string {
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
}

// convert turns a yaml.v3 message ("line 3: field foo not found in type T")
// into an Error in plain words, finding the column from the node tree.
func (d *Doc) convert(msg string) *Error {
	e := &Error{File: d.File, Msg: msg}
	m := reLine.FindStringSubmatch(msg)
	if m == nil {
		return e
	}
	e.Line, _ = strconv.Atoi(m[1])
	e.Msg = m[2]
	if cm := reCol.FindStringSubmatch(e.Msg); cm != nil { // ValueError
		e.Col, _ = strconv.Atoi(cm[1])
		e.Col = writtenCol(d.edits, e.Line, e.Col)
		e.Msg = cm[2]
		if p := nodePath(d.Root, e.Line, e.Col); len(p) > 0 {
			e.Field = strings.Join(p, ".")
		}
		return e
	}
	root := d.Root
	if fm := reFieldMissing.FindStringSubmatch(e.Msg); fm != nil {
		e.Field = fm[1]
		e.Col = findKeyCol(root, e.Line, fm[1])
		e.Msg = "unknown field" + d.suggestField(e.Line, e.Col, fm[1])
		return e
	}
	if am := reAlreadySet.FindStringSubmatch(e.Msg); am != nil {
		e.Field = am[1]
		e.Msg = "duplicate key"
		e.Col = findKeyCol(root, e.Line, am[1])
		return e
	}
	if vm := reValue.FindStringSubmatch(e.Msg); vm != nil {
		if v := findValue(root, e.Line, vm[1]); v != nil {
			e.Col = v.Column
			// yaml.v3 cuts long values short; quote the whole one.
			e.Msg = strings.Replace(e.Msg, "`"+vm[1]+"`", "`"+v.Value+"`", 1)
		}
	} else if strings.HasPrefix(e.Msg, "cannot unmarshal !!") {
		e.Col = findCollectionCol(root, e.Line)
	}
	if e.Col == 0 {
		e.Col = firstCol(root, e.Line)
	} else if p := nodePath(root, e.Line, e.Col); len(p) > 0 {
		e.Field = strings.Join(p, ".")
	}
	e.Msg = plainTypeError(e.Msg)
	return e
}

// ValueError is the error an UnmarshalYAML method returns for a value it
// rejects: placed at n, and of the kind that lets decoding go on with the
// rest of the file (the field stays unset; Doc.Settle drops the
// consequences).
func ValueError(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: column %d: %s", n.Line, n.Column, fmt.Sprintf(format, args...))}}
}

// findValue is the scalar value node on line whose value a yaml.v3 message
// quotes, or nil.
func findValue(n *yaml.Node, line int, value string) *yaml.Node {
	if n == nil {
		return nil
	}
	for i, v := range n.Content {
		isValue := n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode && i%2 == 1
		if isValue && v.Line == line && v.Kind == yaml.ScalarNode && sameValue(v.Value, value) {
			return v
		}
	}
	for _, c := range n.Content {
		if v := findValue(c, line, value); v != nil {
			return v
		}
	}
	return nil
}

// sameValue reports whether a node's value is the one a yaml.v3 message
// quotes, which it cuts to 7 characters and "..." past 10.
func sameValue(node, quoted string) bool {
	if len(quoted) == 10 && strings.HasSuffix(quoted, "...") && len(node) > 10 {
		return strings.HasPrefix(node, quoted[:7])
	}
	return node == quoted
}

// findCollectionCol is the column of the first list or mapping value that
// starts on line, or 0.
func findCollectionCol(n *yaml.Node, line int) int {
	if n == nil {
		return 0
	}
	for i, c := range n.Content {
		isValue := n.Kind != yaml.MappingNode || i%2 == 1
		if isValue && c.Line == line && (c.Kind == yaml.SequenceNode || c.Kind == yaml.MappingNode) {
			return c.Column
		}
		if col := findCollectionCol(c, line); col > 0 {
			return col
		}
	}
	return 0
}

func findKeyCol(n *yaml.Node, line int, key string) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Line == line && k.Value == key {
				return k.Column
			}
		}
	}
	for _, c := range n.Content {
		if col := findKeyCol(c, line, key); col > 0 {
			return col
		}
	}
	return 0
}

func firstCol(n *yaml.Node, line int) int {
	if n == nil {
		return 0
	}
	best := 0
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Line == line && (best == 0 || n.Column < best) {
			best = n.Column
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return best
}

// Node returns the node at a dotted path ("timeline.2.fault.kind": mapping keys
// and sequence indexes), or nil.
func (d *Doc) Node(path string) *yaml.Node {
	if d == nil || d.Root == nil {
		return nil
	}
	n := d.Root
	if path == "" {
		return n
	}
	for _, seg := range strings.Split(path, ".") {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg {
					next = n.Content[i+1]
					break
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
}

// Pos returns the line and column of the value at path. When the path does
// not exist it falls back to its longest existing prefix.
func (d *Doc) Pos(path string) (line, col int) {
	for p := path; ; {
		if n := d.Node(p); n != nil {
			return n.Line, n.Column
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			if n := d.Node(""); n != nil {
				return n.Line, n.Column
			}
			return 0, 0
		}
		p = p[:i]
	}
}

// Errorf returns an Error at the position of path, naming path as the field.
func (d *Doc) Errorf(path, format string, args ...any) *Error {
	line, col := d.Pos(path)
	file := ""
	if d != nil {
		file = d.File
	}
	return &Error{File: file, Line: line, Col: col, Field: path, Msg: fmt.Sprintf(format, args...)}
}

// nodeError is an error from a custom unmarshaler, placed at its node.
func nodeError(n *yaml.Node, format string, args ...any) error {
	return ValueError(n, format, args...)
}

// Duration is a time.Duration written as "30s", "1m30s" or "250ms" in YAML and
// JSON. A bare 0 is accepted; other bare numbers are errors (a unit is required).
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML parses a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "duration must be a string like \"30s\"")
	}
	if n.Value == "0" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return nodeError(n, "invalid duration %q (use a unit, e.g. \"30s\", \"2m\", \"250ms\")", n.Value)
	}
	if v < 0 {
		return nodeError(n, "duration %q must not be negative", n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Percent is a fraction written "25%" or as a plain fraction (0.25) in YAML.
// Values must lie in [0, 1] unless the field documents otherwise.
type Percent float64

// F returns the fraction.
func (p Percent) F() float64 { return float64(p) }

func (p Percent) String() string {
	return strconv.FormatFloat(float64(p)*100, 'f', -1, 64) + "%"
}

// ParsePercent parses "25%", "25.5%" or "0.25".
func ParsePercent(s string) (Percent, error) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "%") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
		if err != nil {
			return 0, fmt.Errorf("invalid percentage %q", s)
		}
		return Percent(v / 100), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid percentage %q (use \"25%%\" or 0.25)", s)
	}
	return Percent(v), nil
}

// UnmarshalYAML parses a percentage in [0, 1].
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "percentage must be a scalar like \"25%%\"")
	}
	v, err := ParsePercent(n.Value)
	if err != nil {
		return nodeError(n, "%v", err)
	}
	if v < 0 || v > 1 {
		if !strings.HasSuffix(n.Value, "%") && v > 1 && v <= 100 {
			return nodeError(n, "%s is not a share between 0 and 1 (did you mean \"%s%%\"?)", n.Value, n.Value)
		}
		return nodeError(n, "%s is not a percentage between 0%% and 100%%", n.Value)
	}
	*p = v
	return nil
}

// MarshalYAML writes "25%".
func (p Percent) MarshalYAML() (any, error) { return p.String(), nil }

// MarshalJSON writes the fraction as a number.
func (p Percent) MarshalJSON() ([]byte, error) { return json.Marshal(float64(p)) }
