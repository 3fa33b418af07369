package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/gateway/alerts"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/mockprovider"
	"github.com/brownout-dev/brownout/scenarios"
	"github.com/brownout-dev/brownout/yamlfile"
)

// This file is the schema generator. It lives in a test so that package
// schemas itself depends on nothing but embed: the committed files are the
// product, and `go test ./schemas -update` rewrites them from the Go types.

// module is the import path of the repository root.
const module = "github.com/brownout-dev/brownout"

// file is one generated schema: the root Go type and how it is presented.
type file struct {
	name  string // "gateway" -> gateway.schema.json
	root  reflect.Type
	title string
	desc  string
}

var generated = []file{
	{"gateway", reflect.TypeFor[gateway.Config](), "brownout gateway config",
		"The gateway file (`brownout serve -c FILE`): upstream providers, routes with their failover chains, the failover policy, alerts and the HTTP shell's settings."},
	{"providers", reflect.TypeFor[mockprovider.File](), "brownout mock providers",
		"A mock providers file (a scenario's `providers.file`): each provider's wire format, address, models, capacity, content rules and standing faults."},
	{"scenario", reflect.TypeFor[scenarios.Scenario](), "brownout game day",
		"A game-day scenario (`brownout gameday run FILE`): providers, gateway, traffic, a timeline of faults and the expected scores."},
}

// Scalar types with their own YAML syntax (an UnmarshalYAML method): each is
// one definition in $defs, referenced wherever the type is used.
var (
	typeDuration  = reflect.TypeFor[yamlfile.Duration]()
	typePercent   = reflect.TypeFor[yamlfile.Percent]()
	typeThreshold = reflect.TypeFor[alerts.Threshold]()
	typeSecret    = reflect.TypeFor[gateway.Secret]()
	typeRate      = reflect.TypeFor[scenarios.Rate]()
	typePrefill   = reflect.TypeFor[mockprovider.Prefill]()
	// Written as a scalar or as a mapping of their fields.
	typeLatency = reflect.TypeFor[faults.Latency]()
	typeLength  = reflect.TypeFor[mockprovider.Length]()
	typeSpec    = reflect.TypeFor[faults.Spec]()
	typeStore   = reflect.TypeFor[scenarios.StoreFault]()
)

// enumTypes are string types whose constants (declared in their package with
// the type spelled out) are the only values the loaders accept.
var enumTypes = []reflect.Type{
	reflect.TypeFor[llm.Format](),
	reflect.TypeFor[llm.ErrorType](),
	reflect.TypeFor[alerts.Kind](),
	reflect.TypeFor[alerts.Severity](),
}

const (
	// durationPattern is what time.ParseDuration accepts without a sign
	// (negative durations are rejected), or a bare "0".
	durationPattern = `^(0|\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// percentPattern is "0%" to "100%".
	percentPattern = `^\s*(100(\.0*)?|[0-9]{1,2}(\.[0-9]*)?|\.[0-9]+)\s*%\s*$`
	// anyPercentPattern is a percentage without bounds (thresholds).
	anyPercentPattern = `^\s*[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*%\s*$`
	// ratePattern is "20/s", "600/m", "600/min", "3600/h" or a bare number.
	ratePattern = `^\s*\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*(/\s*(s|m|min|h)\s*)?$`
)

// scalarDefs are the definitions of the scalar types, by type.
func scalarDefs() map[reflect.Type]*jsonschema.Schema {
	zero := json.Number("0")
	return map[reflect.Type]*jsonschema.Schema{
		typeDuration: {
			Description: `A duration: a number with a unit (ns, us, ms, s, m, h), e.g. "30s", "1m30s", "250ms"; a bare 0 is allowed. Never negative.`,
			AnyOf: []*jsonschema.Schema{
				{Type: "string", Pattern: durationPattern},
				{Type: "integer", Const: 0},
			},
		},
		typePercent: {
			Description: `A fraction: a percentage from "0%" to "100%" or a number from 0 to 1 ("25%" is 0.25).`,
			AnyOf: []*jsonschema.Schema{
				{Type: "string", Pattern: percentPattern},
				{Type: "number", Minimum: zero, Maximum: json.Number("1")},
			},
		},
		typeThreshold: {
			Description: `A number (2, 0.25, 40.5) or a percentage ("25%" is 0.25).`,
			AnyOf: []*jsonschema.Schema{
				{Type: "number"},
				{Type: "string", Pattern: anyPercentPattern},
			},
		},
		typeSecret: {
			Description: "A secret: literal text or ${NAME} references to environment variables (resolved at load; an unset variable is an error).",
			Type:        "string",
		},
		typePrefill: {
			Description: `How a model takes an assistant prefill: true continues it, "ignore" accepts it and answers from scratch (a model that does not take prefill), false rejects it with a 400.`,
			AnyOf: []*jsonschema.Schema{
				{Type: "boolean"},
				{Type: "string", Enum: []any{"ignore"}},
			},
		},
		typeRate: {
			Description: `Requests per second: "20/s", "600/m" or "3600/h"; a bare number is per second.`,
			AnyOf: []*jsonschema.Schema{
				{Type: "string", Pattern: ratePattern},
				{Type: "number", Minimum: zero},
			},
		},
	}
}

// scalarForms are the scalar spellings of types that are otherwise written as
// a mapping of their fields.
func scalarForms() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		typeLatency: {Ref: ref(typeDuration), Description: "A fixed duration."},
		typeLength:  {Type: "integer", Minimum: json.Number("0"), Description: "A fixed number of tokens."},
		typeStore:   {Type: "string", Enum: []any{"down"}, Description: "The store is down."},
	}
}

// required lists the fields the loaders insist on, by definition name. The
// generator fails when one is not a property, so a renamed field cannot go
// stale here.
var required = map[string][]string{
	"gateway.Config":            {"version", "providers", "routes"},
	"gateway.Provider":          {"name", "kind"},
	"mockprovider.File":         {"version", "providers"},
	"mockprovider.ProviderSpec": {"name", "format", "models"},
	"mockprovider.ModelSpec":    {"name"},
	"scenarios.Scenario":        {"version", "name", "duration", "providers", "gateway", "traffic"},
	"scenarios.Traffic":         {"route"},
	"scenarios.Step":            {"name"},
	"faults.Spec":               {"kind"},
	"alerts.Rule":               {"name", "kind"},
}

// fieldEnums are plain string fields that take a closed set of values, read
// from the constants the loaders check them against: those of a type
// ("importpath.Type") or the untyped ones whose names start with a prefix
// ("importpath.Prefix*").
var fieldEnums = []struct{ def, prop, consts string }{
	{"gateway.Provider", "kind", module + "/gateway.ProviderKind"},
	{"gateway.Provider", "protocol", module + "/gateway.Protocol"},
	{"policy.Budget", "on_exhausted", module + "/gateway/policy.OnExhausted*"},
	{"faults.Latency", "dist", module + "/faults.Dist*"},
	{"scenarios.Gateway", "state", module + "/scenarios.State*"},
}

// constValues resolves a fieldEnums source.
func constValues(consts map[string][]string, src string) []any {
	var out []any
	prefix, ok := strings.CutSuffix(src, "*")
	if !ok {
		for _, v := range consts[src] {
			out = append(out, v)
		}
		return out
	}
	pkg, name := path.Split(prefix)
	pkgPath, namePrefix, _ := strings.Cut(name, ".")
	for _, nv := range consts[pkg+pkgPath+untyped] {
		n, v, _ := strings.Cut(nv, "=")
		if strings.HasPrefix(n, namePrefix) {
			out = append(out, v)
		}
	}
	return out
}

// versioned are the definitions whose `version` must be 1.
var versioned = []string{"gateway.Config", "mockprovider.File", "scenarios.Scenario"}

func defName(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		return ""
	}
	return path.Base(t.PkgPath()) + "." + t.Name()
}

func ref(t reflect.Type) string { return "#/$defs/" + defName(t) }

// generate returns the schema file for f, indented, with a final newline.
func generate(f file) ([]byte, error) {
	if err := checkYAMLNames(f.root, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	docs, consts, err := collectDocs(f.root)
	if err != nil {
		return nil, err
	}
	enums := map[reflect.Type][]any{}
	for _, t := range enumTypes {
		vals := consts[t.PkgPath()+"."+t.Name()]
		if len(vals) == 0 {
			return nil, fmt.Errorf("no constants of %s found", t)
		}
		for _, v := range vals {
			enums[t] = append(enums[t], v)
		}
	}
	scalars := scalarDefs()
	used := map[reflect.Type]bool{}
	named := map[string]reflect.Type{}
	var clash error
	r := &jsonschema.Reflector{
		FieldNameTag: "yaml",
		// Nothing is required by the tags (yaml.v3 requires nothing); the
		// required table above says what the loaders insist on.
		RequiredFromJSONSchemaTags: true,
		Namer: func(t reflect.Type) string {
			n := defName(t)
			if prev, ok := named[n]; ok && prev != t && clash == nil {
				clash = fmt.Errorf("%s and %s would share the definition %q", prev.PkgPath(), t.PkgPath(), n)
			}
			if n != "" {
				named[n] = t
			}
			return n
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if _, ok := scalars[t]; ok {
				used[t] = true
				return &jsonschema.Schema{Ref: ref(t)}
			}
			if e, ok := enums[t]; ok {
				return &jsonschema.Schema{Type: "string", Enum: e}
			}
			switch t.Kind() {
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				return &jsonschema.Schema{Type: "integer", Minimum: json.Number("0")}
			}
			return nil
		},
		LookupComment: func(t reflect.Type, field string) string {
			k := t.PkgPath() + "." + t.Name()
			if field != "" {
				k += "." + field
			}
			return docs[k]
		},
	}
	s := r.ReflectFromType(f.root)
	if clash != nil {
		return nil, clash
	}
	for t := range used {
		s.Definitions[defName(t)] = scalars[t]
	}
	for _, fe := range fieldEnums {
		d := s.Definitions[fe.def]
		if d == nil {
			continue
		}
		p, ok := d.Properties.Get(fe.prop)
		if !ok {
			return nil, fmt.Errorf("enum field %s.%s is not a property (update fieldEnums)", fe.def, fe.prop)
		}
		vals := constValues(consts, fe.consts)
		if len(vals) == 0 {
			return nil, fmt.Errorf("no constants %s for %s.%s (update fieldEnums)", fe.consts, fe.def, fe.prop)
		}
		p.Enum = vals
	}
	for t, scalar := range scalarForms() {
		d := s.Definitions[defName(t)]
		if d == nil {
			continue
		}
		obj := *d
		obj.Description = "The distribution's fields."
		s.Definitions[defName(t)] = &jsonschema.Schema{
			Description: d.Description,
			AnyOf:       []*jsonschema.Schema{scalar, &obj},
		}
	}
	if d := s.Definitions[defName(typeSpec)]; d != nil {
		faultKinds(d)
	}
	for name, fields := range required {
		d := s.Definitions[name]
		if d == nil {
			continue
		}
		for _, p := range fields {
			if _, ok := d.Properties.Get(p); !ok {
				return nil, fmt.Errorf("required field %s.%s is not a property (update the required table)", name, p)
			}
		}
		d.Required = fields
	}
	for _, name := range versioned {
		if d := s.Definitions[name]; d != nil {
			v, _ := d.Properties.Get("version")
			v.Type = ""
			v.Const = 1
			v.Description = "The file format version: 1."
		}
	}
	root := &jsonschema.Schema{
		Version:     jsonschema.Version,
		ID:          jsonschema.ID("https://brownout.dev/schemas/" + f.name + ".schema.json"),
		Ref:         s.Ref,
		Title:       f.title,
		Description: f.desc,
		Definitions: s.Definitions,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// faultKinds constrains a fault spec: kind is one of faults.Kinds(), and a
// parameter the kind does not use is rejected (as faults.Spec.Validate does).
func faultKinds(d *jsonschema.Schema) {
	kinds := faults.Kinds()
	var enum []any
	for _, k := range kinds {
		enum = append(enum, string(k))
	}
	if k, ok := d.Properties.Get("kind"); ok {
		k.Type = ""
		k.Enum = enum
		k.Description = "The fault kind; it decides which parameters may be set."
	}
	// The parameters are Spec's own fields; the rest (the inline Selector)
	// apply to every kind.
	var params []string
	spec := reflect.TypeFor[faults.Spec]()
	for i := range spec.NumField() {
		name, opts, _ := strings.Cut(spec.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" || name == "kind" || name == "id" || opts == "inline" {
			continue
		}
		params = append(params, name)
	}
	for _, k := range kinds {
		allowed := faults.Params(k)
		then := &jsonschema.Schema{Properties: jsonschema.NewProperties()}
		for _, p := range params {
			if !slices.Contains(allowed, p) {
				then.Properties.Set(p, jsonschema.FalseSchema)
			}
		}
		if then.Properties.Len() == 0 {
			continue
		}
		cond := &jsonschema.Schema{Properties: jsonschema.NewProperties(), Required: []string{"kind"}}
		cond.Properties.Set("kind", &jsonschema.Schema{Const: string(k)})
		d.AllOf = append(d.AllOf, &jsonschema.Schema{If: cond, Then: then})
	}
}

// checkYAMLNames fails on exported fields without a yaml name: yaml.v3 would
// lowercase the Go name, the reflector would not.
func checkYAMLNames(t reflect.Type, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	if _, ok := scalarDefs()[t]; ok {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" && opts != "inline" {
			return fmt.Errorf("%s.%s has no yaml name", t, f.Name)
		}
		if err := checkYAMLNames(f.Type, seen); err != nil {
			return err
		}
	}
	return nil
}

// collectDocs returns the doc comments of the module's types reachable from
// root, keyed "importpath.Type" and "importpath.Type.Field" (types get their
// first sentence, fields their whole comment, lines unwrapped), and the string
// constants declared with an explicit type, keyed "importpath.Type", in
// source order.
func collectDocs(root reflect.Type) (docs map[string]string, consts map[string][]string, err error) {
	pkgs := map[string]bool{}
	var walk func(t reflect.Type)
	seen := map[reflect.Type]bool{}
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if seen[t] {
			return
		}
		seen[t] = true
		if strings.HasPrefix(t.PkgPath(), module+"/") {
			pkgs[t.PkgPath()] = true
		}
		if t.Kind() == reflect.Struct {
			for i := range t.NumField() {
				walk(t.Field(i).Type)
			}
		}
	}
	walk(root)
	for _, t := range enumTypes {
		pkgs[t.PkgPath()] = true
	}
	docs = map[string]string{}
	consts = map[string][]string{}
	for pkg := range pkgs {
		dir := filepath.Join("..", filepath.FromSlash(strings.TrimPrefix(pkg, module+"/")))
		pd, ok := parsed[pkg]
		if !ok {
			pd = pkgDocs{docs: map[string]string{}, consts: map[string][]string{}}
			if err := packageDocs(pkg, dir, pd.docs, pd.consts); err != nil {
				return nil, nil, err
			}
			parsed[pkg] = pd
		}
		maps.Copy(docs, pd.docs)
		maps.Copy(consts, pd.consts)
	}
	return docs, consts, nil
}

// pkgDocs is what packageDocs found in one package.
type pkgDocs struct {
	docs   map[string]string
	consts map[string][]string
}

// parsed caches packageDocs across the schemas a test run generates.
var parsed = map[string]pkgDocs{}

// packageDocs parses the non-test files of one package. Files are read in
// directory order (sorted), so the result does not depend on the machine.
func packageDocs(pkg, dir string, docs map[string]string, consts map[string][]string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if ok && g.Tok == token.CONST {
				stringConsts(pkg, g, consts)
			}
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				if !ts.Name.IsExported() {
					continue
				}
				tdoc := ts.Doc
				if tdoc == nil && len(g.Specs) == 1 {
					tdoc = g.Doc
				}
				if txt := synopsis(tdoc.Text()); txt != "" {
					docs[pkg+"."+ts.Name.Name] = txt
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					c := fld.Doc
					if c == nil {
						c = fld.Comment
					}
					txt := unwrap(c.Text())
					if txt == "" {
						continue
					}
					for _, name := range fld.Names {
						docs[pkg+"."+ts.Name.Name+"."+name.Name] = txt
					}
				}
			}
		}
	}
	return nil
}

// synopsis returns the first sentence of a doc comment.
func synopsis(s string) string {
	return new(doc.Package).Synopsis(s)
}

// untyped keys a package's untyped string constants, recorded as
// "Name=value" in source order.
const untyped = ".(untyped)"

// stringConsts records `Name Type = "value"` constants by type, and untyped
// `Name = "value"` ones under pkg+untyped.
func stringConsts(pkg string, g *ast.GenDecl, consts map[string][]string) {
	for _, spec := range g.Specs {
		vs := spec.(*ast.ValueSpec)
		typ, typed := vs.Type.(*ast.Ident)
		if vs.Type != nil && !typed {
			continue
		}
		for i, v := range vs.Values {
			lit, ok := v.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || i >= len(vs.Names) {
				continue
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				continue
			}
			if typed {
				consts[pkg+"."+typ.Name] = append(consts[pkg+"."+typ.Name], s)
			} else {
				consts[pkg+untyped] = append(consts[pkg+untyped], vs.Names[i].Name+"="+s)
			}
		}
	}
}

var blankLines = regexp.MustCompile(`\n\s*\n`)

// unwrap joins the lines of each paragraph; paragraphs stay apart.
func unwrap(s string) string {
	paras := blankLines.Split(strings.TrimSpace(s), -1)
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n\n")
}
