package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brownout-dev/brownout/gateway"
	"github.com/brownout-dev/brownout/scenarios/score"
	"github.com/brownout-dev/brownout/yamlfile"
)

// Contestant is one gateway of a bake-off: a running gateway at URL, or
// brownout's own gateway from a Config file (started in-process, as a live
// run does). Either way it is scored as a black box — from what its users
// and the mock providers saw, never from its own events — so every
// contestant is measured alike.
type Contestant struct {
	Name   string `json:"name"`
	URL    string `json:"url,omitempty"`
	Config string `json:"config,omitempty"`
	// Headers are sent with every user request to this contestant, after
	// the scenario's gateway.headers (resolved secrets: never written out).
	Headers map[string]gateway.Secret `json:"-"`
}

// Comparison is a bake-off: one scenario played live, with the same seed
// and the same traffic, against each contestant in turn.
type Comparison struct {
	Scenario    string             `json:"scenario"`
	File        string             `json:"file,omitempty"`
	Seed        uint64             `json:"seed"`
	Contestants []ContestantResult `json:"contestants"`
	Pass        bool               `json:"pass"` // every contestant met every expectation
	// Rounds is how many times each contestant played (Options.Repeat),
	// with the seeds Seed, Seed+1, ...; 1 for a single run.
	Rounds int `json:"rounds"`
}

// ContestantResult is one contestant's run. Over several rounds, Result is
// the first round's (its charts and timeline), Repeat the distribution of
// every score over the rounds and the verdict by expect.pass_rate, the rule
// a repeated run uses (default: every round).
type ContestantResult struct {
	Contestant
	Result *score.Result `json:"result"`
	Repeat *Sweep        `json:"repeat,omitempty"`
	// Pass is the contestant's verdict: Result's, or Repeat's over rounds.
	Pass bool `json:"pass"`
}

var contestantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ParseContestant reads a --gateway argument, NAME=URL (a running gateway)
// or NAME=FILE (a brownout gateway config).
func ParseContestant(arg string) (Contestant, error) {
	name, where, ok := strings.Cut(arg, "=")
	if !ok || where == "" {
		return Contestant{}, fmt.Errorf("%q: want NAME=URL or NAME=GATEWAY_CONFIG", arg)
	}
	if !contestantName.MatchString(name) {
		return Contestant{}, fmt.Errorf("%q: a contestant's name is letters, digits, '.', '_' and '-' (it names a directory)", name)
	}
	c := Contestant{Name: name}
	if strings.HasPrefix(where, "http://") || strings.HasPrefix(where, "https://") {
		c.URL = where
	} else {
		c.Config = where
	}
	return c, nil
}

// LoadHeaders reads a headers file: a YAML map of header name to value,
// values with ${NAME} references to the environment. Errors name the file,
// line and column, and never a value.
func LoadHeaders(path string) (map[string]gateway.Secret, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var hs map[string]gateway.Secret
	doc, err := yamlfile.Decode(path, data, &hs)
	if err != nil {
		return nil, err
	}
	var es yamlfile.Errors
	for _, name := range sortedKeys(hs) {
		v := hs[name]
		if msg := checkHeader(name, &v); msg != "" {
			es = append(es, doc.Errorf(name, "%s", msg))
		}
		hs[name] = v
	}
	if len(es) > 0 {
		return nil, es
	}
	return hs, nil
}

// Compare plays s live against each contestant in turn, with the same seed
// (opts.Seed or the scenario's) and so the same traffic and faults. Every
// contestant is scored as a black box, so an expectation a black box
// cannot be measured on is an input error (ErrInvalid) naming it. A
// canceled ctx stops the bake-off: the contestants played so far are
// returned, the one cut short marked aborted.
//
// With opts.Repeat N above 1 the bake-off plays N rounds; round i plays
// every contestant with seed+i, starting with contestant i (mod the count),
// so drift on the machine (load, a warming cache) does not always favour
// the same one. One slow window in one live run then moves a percentile,
// not the ranking. A canceled ctx ends the bake-off after the run in
// progress, and an incomplete bake-off fails.
func Compare(ctx context.Context, s *Scenario, cs []Contestant, opts Options) (*Comparison, error) {
	if len(cs) == 0 {
		return nil, fmt.Errorf("%w: a bake-off needs at least one gateway", ErrInvalid)
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.Name] {
			return nil, fmt.Errorf("%w: two gateways named %q", ErrInvalid, c.Name)
		}
		seen[c.Name] = true
		if c.Config != "" {
			if _, err := loadGatewayConfig(c.Config); err != nil {
				return nil, fmt.Errorf("%w: gateway %s: %w", ErrInvalid, c.Name, err)
			}
		}
	}
	if es := s.blackBoxErrors(); len(es) > 0 {
		return nil, invalid(es)
	}
	seed := s.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	rounds := max(opts.Repeat, 1)
	cmp := &Comparison{Scenario: s.Name, File: s.file, Seed: seed, Pass: true, Rounds: rounds}
	// results[k] are contestant k's results, one per round played.
	results := make([][]*score.Result, len(cs))
	var runErr error
	played := 0
rounds:
	for round := range rounds {
		for j := range cs {
			k := (round + j) % len(cs)
			c := cs[k]
			if ctx.Err() != nil {
				break rounds
			}
			hs := map[string]gateway.Secret{}
			for k, v := range s.Gateway.Headers {
				hs[k] = v
			}
			for k, v := range c.Headers {
				hs[k] = v
			}
			if opts.Progress != nil {
				if rounds > 1 {
					fmt.Fprintf(opts.Progress, "== round %d of %d (seed %d): %s (%s)\n", round+1, rounds, seed+uint64(round), c.Name, c.Where())
				} else {
					fmt.Fprintf(opts.Progress, "== %s (%s)\n", c.Name, c.Where())
				}
			}
			res, err := runLiveWith(ctx, s, seed+uint64(round), opts, liveGateway{url: c.URL, config: c.Config, headers: hs, blackBox: true})
			if err != nil {
				runErr = fmt.Errorf("gateway %s: %w", c.Name, err)
				break rounds
			}
			res.Versions["gateway"] = c.Name
			if round > 0 { // only the first round's log and series are reported
				res.DropLog()
				res.Series = score.Series{}
			}
			results[k] = append(results[k], res)
			played++
		}
	}
	for k, c := range cs {
		if len(results[k]) == 0 {
			continue
		}
		cr := ContestantResult{Contestant: c, Result: results[k][0], Pass: results[k][0].Pass}
		if rounds > 1 {
			seeds := make([]uint64, len(results[k]))
			for i := range seeds {
				seeds[i] = seed + uint64(i)
			}
			cr.Repeat = s.summarize(seeds, results[k])
			cr.Repeat.Mode = ModeLive
			cr.Pass = cr.Repeat.Pass && len(results[k]) == rounds
		}
		cmp.Contestants = append(cmp.Contestants, cr)
		cmp.Pass = cmp.Pass && cr.Pass
	}
	if played < rounds*len(cs) {
		cmp.Pass = false // an incomplete bake-off decides nothing
	}
	return cmp, runErr
}

// Where says where the contestant is: its URL or its config file.
func (c Contestant) Where() string {
	if c.URL != "" {
		return c.URL
	}
	return "brownout gateway " + c.Config
}

// blackBoxErrors returns the expectations of s a black box cannot be
// measured on (a bake-off scores every gateway as one).
func (s *Scenario) blackBoxErrors() yamlfile.Errors {
	var es yamlfile.Errors
	add := func(path, format string, args ...any) { es = append(es, s.doc.Errorf(path, format, args...)) }
	s.checkMeasurable(true, add)
	return es
}

// WriteDir writes compare.json (every contestant's result) and each
// contestant's result.json, events.jsonl and journals into dir/NAME.
func (c *Comparison) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, cr := range c.Contestants {
		errs = append(errs, cr.Result.WriteDir(filepath.Join(dir, cr.Name)))
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	errs = append(errs, os.WriteFile(filepath.Join(dir, "compare.json"), append(b, '\n'), 0o644))
	return errors.Join(errs...)
}
