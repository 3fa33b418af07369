package gateway

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/brownout-dev/brownout/evals"
	"github.com/brownout-dev/brownout/events"
	"github.com/brownout-dev/brownout/yamlfile"
)

// QualificationConfig makes the gateway check, when a configuration is
// loaded, that every fallback of every route was qualified for it by
// `brownout evals qualify` (a qualification file). A route's first target
// is its primary; every other target is a fallback and must be listed in
// the file for that route, as a qualified fallback or as a primary.
type QualificationConfig struct {
	// File is the qualification file (JSON, as `brownout evals qualify`
	// writes it); a relative path is relative to the configuration file's
	// directory. Default empty: no check.
	File string `yaml:"file,omitempty"`
	// Require is what an unqualified fallback does: "warn" (default: the
	// configuration loads, and the server logs a warning and emits a
	// config.warning event at start and on reload) or "refuse" (loading
	// fails with an error naming the route and the target).
	Require string `yaml:"require,omitempty"`
}

// Unqualified is one fallback the qualification file does not vouch for.
type Unqualified struct {
	Route  string // route name
	Target string // provider:model
	File   string // the qualification file
}

func (u Unqualified) String() string {
	return fmt.Sprintf("route %q: fallback %s is not qualified (%s)", u.Route, u.Target, u.File)
}

// validate checks the qualification section and every route's fallbacks
// against the file; unqualified fallbacks are errors (refuse) or are
// recorded for the server to warn about.
func (q *QualificationConfig) validate(c *Config, doc *yamlfile.Doc, add func(path, format string, args ...any), routesOK bool) {
	switch q.Require {
	case "", "warn", "refuse":
	default:
		add("qualification.require", "%q is not warn or refuse", q.Require)
		return
	}
	if q.File == "" {
		if q.Require != "" {
			add("qualification.file", "required with qualification.require")
		}
		return
	}
	if !routesOK {
		return
	}
	path := q.File
	if !filepath.IsAbs(path) && doc != nil && doc.File != "" {
		path = filepath.Join(filepath.Dir(doc.File), path)
	}
	qf, err := evals.LoadQualification(path)
	if err != nil {
		add("qualification.file", "%v", err)
		return
	}
	for i, r := range c.Routes {
		for j := 1; j < len(r.Targets); j++ {
			key := r.Targets[j].Key()
			if qf.Qualified(r.Name, key) {
				continue
			}
			u := Unqualified{Route: r.Name, Target: key, File: path}
			if q.Require == "refuse" {
				add(fmt.Sprintf("routes.%d.targets.%d", i, j), "%s; qualification.require is refuse", u)
				continue
			}
			c.unqualified = append(c.unqualified, u)
		}
	}
}

// Unqualified returns the fallbacks the qualification file does not vouch
// for, when qualification.require is warn (with refuse they are load
// errors). Nil when no qualification file is configured.
func (c *Config) Unqualified() []Unqualified { return c.unqualified }

// warnUnqualified logs and emits a config.warning for every unqualified
// fallback of cfg.
func (s *Server) warnUnqualified(cfg *Config) {
	for _, u := range cfg.unqualified {
		s.log.Warn("unqualified fallback", "route", u.Route, "target", u.Target, "file", u.File)
		s.emit(eventConfigWarning(u))
	}
}

func eventConfigWarning(u Unqualified) events.Event {
	return events.Event{Time: time.Now(), Kind: events.ConfigWarning, Route: u.Route, Target: u.Target,
		Name: "unqualified_fallback", Reason: u.String()}
}
