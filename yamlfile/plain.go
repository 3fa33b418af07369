package yamlfile

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// This file turns what yaml.v3 says into what a user can act on: syntax
// errors at the character that is wrong, type errors without YAML tags,
// suggestions for misspelt fields, and one report per mistake (Settle).

// syntaxError places a parse error. yaml.v3 names the line where the
// enclosing construct began, often lines above the mistake, and no column;
// the two mistakes people make most — a tab in the indentation and a line
// indented to no level of the lines above — are found directly.
func syntaxError(file string, data []byte, msg string) *Error {
	e := &Error{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
	if m := reLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if tab := strings.IndexByte(l, '\t'); tab >= 0 && strings.TrimLeft(l[:tab], " ") == "" {
			return &Error{File: file, Line: i + 1, Col: tab + 1, Msg: "tab in indentation: YAML indents with spaces"}
		}
	}
	if line, col, what := badIndent(lines); line > 0 {
		return &Error{File: file, Line: line, Col: col, Msg: what}
	}
	return e
}

// notUTF8 places the first byte of data that is not UTF-8 (yaml.v3 says
// only "invalid trailing UTF-8 octet"), naming the field it sits in, or
// returns nil. A file that starts with a UTF-16 byte order mark is left to
// yaml.v3, which reads UTF-16.
func notUTF8(file string, data []byte) *Error {
	if utf8.Valid(data) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) {
		return nil
	}
	i := 0
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	line := bytes.Count(data[:i], []byte{'\n'}) + 1
	col := utf8.RuneCount(data[start:i]) + 1
	e := &Error{File: file, Line: line, Col: col,
		Msg: fmt.Sprintf("byte 0x%02x is not UTF-8; save the file as UTF-8 (an editor's \"Latin-1\" or \"Windows-1252\" encoding writes such bytes)", data[i])}
	// Name the field: the same text with the bad byte replaced parses to
	// the same positions up to it.
	fixed := slices.Clone(data)
	fixed[i] = '?'
	var root yaml.Node
	if yaml.Unmarshal(bytes.ToValidUTF8(fixed, []byte("?")), &root) == nil && len(root.Content) > 0 {
		if n := lastNodeBefore(root.Content[0], line, col); n != nil {
			e.Field = strings.Join(nodePath(root.Content[0], n.Line, n.Column), ".")
		}
	}
	return e
}

// lastNodeBefore is the scalar node on line that starts last at or before
// col, or nil.
func lastNodeBefore(n *yaml.Node, line, col int) *yaml.Node {
	var best *yaml.Node
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Line == line && n.Column <= col && (best == nil || n.Column > best.Column) {
			best = n
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return best
}

// badIndent finds the first line of block YAML indented deeper than the line
// before it allows, or back out to a column no line above opened. Block
// scalars (| and >), flow collections and comments are skipped.
func badIndent(lines []string) (line, col int, what string) {
	levels := []int{0} // indentation of the open block levels
	opens := false     // the previous line opens a nested block
	scalar := -1       // indentation of an open block scalar's key, or -1
	plainKey := false  // the previous line is "key: value" (a plain value may continue)
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		ind := len(l) - len(t)
		if t == "" || strings.HasPrefix(t, "#") || t == "---" {
			continue
		}
		if scalar >= 0 {
			if ind > scalar {
				continue
			}
			scalar = -1
		}
		cur := levels[len(levels)-1]
		switch {
		case ind > cur && !opens:
			if !plainKey || keyLike(t) {
				return i + 1, ind + 1, fmt.Sprintf("unexpected indentation: %d spaces where the line above allows %d", ind, cur)
			}
			continue // a plain scalar continued on the next line
		case ind > cur:
			levels = append(levels, ind)
		case ind < cur:
			open := joinInts(levels)
			for len(levels) > 1 && levels[len(levels)-1] > ind {
				levels = levels[:len(levels)-1]
			}
			if levels[len(levels)-1] != ind {
				return i + 1, ind + 1, fmt.Sprintf("indentation of %d spaces matches no enclosing level (the lines above use %s)", ind, open)
			}
		}
		body := t
		for strings.HasPrefix(body, "- ") { // "- key: v" opens a level at the key
			body = strings.TrimLeft(body[2:], " ")
		}
		if body != t && keyLike(body) {
			levels = append(levels, ind+len(t)-len(body))
		}
		v := strings.TrimSpace(stripComment(body))
		opens = strings.HasSuffix(v, ":") || v == "-"
		plainKey = keyLike(body) && !opens
		if strings.HasSuffix(v, "|") || strings.HasSuffix(v, ">") || strings.HasSuffix(v, "|-") || strings.HasSuffix(v, ">-") {
			scalar, opens = ind, false
		}
		if strings.ContainsAny(v, "[{") && !strings.ContainsAny(v, "]}") {
			return 0, 0, "" // a flow collection spans lines: leave it to the parser
		}
	}
	return 0, 0, ""
}

var reKey = regexp.MustCompile(`^[A-Za-z0-9_."'-]+:( |$)`)

func keyLike(s string) bool { return reKey.MatchString(s) || strings.HasPrefix(s, "- ") }

func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

var reDidYouMean = regexp.MustCompile(`^unknown field \(did you mean "([^"]+)"\?\)$`)

var reTypeError = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `([^`]*)`)? into (\\S+)$")

// plainTypeError rewrites "cannot unmarshal !!str `abc` into int" as
// `want a whole number, got "abc"`.
func plainTypeError(msg string) string {
	m := reTypeError.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	var got string
	switch m[1] {
	case "str":
		got = strconv.Quote(m[2])
	case "seq":
		got = "a list"
	case "map":
		got = "a mapping"
	case "null":
		got = "nothing"
	default:
		got = m[2]
	}
	return "want " + goTypeWords(m[3]) + ", got " + got
}

func goTypeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	case t == "float32" || t == "float64":
		return "a number"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case t == "time.Duration":
		return "a duration like \"30s\""
	}
	return "a mapping" // a struct type
}

// Suggest returns the candidate closest to word when it is close enough to
// be a typo (an edit distance of at most a third of its length, and at least
// 1), or "".
func Suggest(word string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len(word)/3) {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours cost 1.
func editDistance(a, b string) int {
	pprev := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pprev[j-2]+1) // a transposition
			}
		}
		pprev, prev, cur = prev, cur, pprev
	}
	return prev[len(b)]
}

// suggestField is " (did you mean "x"?)" for an unknown key at line:col, or
// " (one of a, b, c)" when no known field is close.
func (d *Doc) suggestField(line, col int, key string) string {
	path := nodePath(d.Root, line, col)
	if path == nil || d.typ == nil {
		return ""
	}
	t := typeAt(d.typ, path[:len(path)-1])
	if t == nil {
		return ""
	}
	names := fieldNames(t)
	if len(names) == 0 {
		return ""
	}
	if s := Suggest(key, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	slices.Sort(names)
	return " (one of " + strings.Join(names, ", ") + ")"
}

// nodePath is the path of mapping keys and sequence indexes from n to the
// key or value node at line:col (the last element names that node), or nil.
func nodePath(n *yaml.Node, line, col int) []string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Line == line && k.Column == col {
				return []string{k.Value}
			}
			if p := nodePath(v, line, col); p != nil {
				return append([]string{k.Value}, p...)
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			if p := nodePath(v, line, col); p != nil {
				return append([]string{strconv.Itoa(i)}, p...)
			}
		}
	}
	if n.Line == line && n.Column == col {
		return []string{}
	}
	return nil
}

// typeAt follows path (field names and indexes) from t, or returns nil.
func typeAt(t reflect.Type, path []string) reflect.Type {
	for _, seg := range path {
		t = deref(t)
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByName(t, seg)
			if !ok {
				return nil
			}
			t = f
		default:
			return nil
		}
	}
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// yamlFields calls fn with the YAML name and type of each field of struct t,
// inline fields flattened.
func yamlFields(t reflect.Type, fn func(name string, ft reflect.Type)) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			if ft := deref(f.Type); ft.Kind() == reflect.Struct {
				yamlFields(ft, fn)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fn(name, f.Type)
	}
}

func fieldByName(t reflect.Type, name string) (reflect.Type, bool) {
	var out reflect.Type
	yamlFields(t, func(n string, ft reflect.Type) {
		if n == name && out == nil {
			out = ft
		}
	})
	return out, out != nil
}

func fieldNames(t reflect.Type) []string {
	var out []string
	yamlFields(t, func(n string, _ reflect.Type) { out = append(out, n) })
	return out
}

// Settle returns every problem of a file once: the decoding errors and the
// validation errors that are not consequences of a value that failed to
// decode (a rejected value leaves its field unset, and "required" there, or
// in what it holds, would report one mistake twice) or of a misspelt key
// (the field it was meant to be reads as unset), sorted by position with
// exact duplicates dropped.
func (d *Doc) Settle(decode, validate Errors) Errors {
	bad := map[[2]int]bool{}
	misspelt := map[string]bool{} // the fields that unknown keys were meant to be
	for _, e := range decode {
		if e.Line > 0 {
			bad[[2]int{e.Line, e.Col}] = true
		}
		if m := reDidYouMean.FindStringSubmatch(e.Msg); m != nil && d != nil {
			if p := nodePath(d.Root, e.Line, e.Col); len(p) > 0 {
				misspelt[strings.Join(append(p[:len(p)-1:len(p)-1], m[1]), ".")] = true
			}
		}
	}
	out := slices.Clone(decode)
	for _, e := range validate {
		if d != nil && e.Field != "" && (d.broken(e.Field, bad) || misspelt[e.Field]) {
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
	return slices.CompactFunc(out, func(a, b *Error) bool { return a.Error() == b.Error() })
}

// broken reports whether the node at path, or one on the way to it, is at a
// position in bad.
func (d *Doc) broken(path string, bad map[[2]int]bool) bool {
	if d.Root == nil {
		return false
	}
	segs := strings.Split(path, ".")
	for i := range segs {
		n := d.Node(strings.Join(segs[:i+1], "."))
		if n == nil {
			return false
		}
		if bad[[2]int{n.Line, n.Column}] {
			return true
		}
	}
	return false
}
