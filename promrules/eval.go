package promrules

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// State is an alert's state, as Prometheus names it.
type State string

// Alert states.
const (
	Inactive State = "inactive"
	Pending  State = "pending"
	Firing   State = "firing"
)

// Change is an alert instance changing state at an evaluation.
type Change struct {
	At   time.Time
	Rule *Rule
	// Labels are the alert's labels (the expression's result labels, the
	// rule's labels and alertname), written {a="b", ...} in label order.
	Labels   string
	From, To State
	Value    float64
}

// Options tune an Evaluator.
type Options struct {
	// EvalInterval is the rule evaluation interval (subqueries without a
	// step use it too). Default 15s.
	EvalInterval time.Duration
	// LookbackDelta is how far back an instant selector looks for a
	// sample. Default 5m, as in Prometheus.
	LookbackDelta time.Duration
}

// Evaluator evaluates alerting rules over a Store at the times it is
// given, with the state machine of Prometheus' AlertingRule (pending for
// for:, firing, kept firing for keep_firing_for:, resolved). It does no I/O
// and reads no clock.
type Evaluator struct {
	rules  *Rules
	store  *Store
	engine *promql.Engine
	opts   Options
	active []map[uint64]*alert // per rule
}

// alert is one instance of a rule (rules/alerting.go's Alert).
type alert struct {
	labels          labels.Labels
	state           State
	activeAt        time.Time
	resolvedAt      time.Time
	keepFiringSince time.Time
	value           float64
}

// resolvedRetention is how long Prometheus keeps a resolved alert.
const resolvedRetention = 15 * time.Minute

// NewEvaluator returns an evaluator of rules over store.
func NewEvaluator(rules *Rules, store *Store, opts Options) *Evaluator {
	if opts.EvalInterval <= 0 {
		opts.EvalInterval = 15 * time.Second
	}
	if opts.LookbackDelta <= 0 {
		opts.LookbackDelta = 5 * time.Minute
	}
	every := opts.EvalInterval.Milliseconds()
	eng := promql.NewEngine(promql.EngineOpts{
		Logger:                   promslog.NewNopLogger(),
		Reg:                      prometheus.NewRegistry(), // its own metrics stay private
		MaxSamples:               50_000_000,
		Timeout:                  time.Minute,
		LookbackDelta:            opts.LookbackDelta,
		NoStepSubqueryIntervalFn: func(int64) int64 { return every },
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
		Parser:                   promParser,
	})
	e := &Evaluator{rules: rules, store: store, engine: eng, opts: opts}
	if rules != nil {
		e.active = make([]map[uint64]*alert, len(rules.List))
		for i := range e.active {
			e.active[i] = map[uint64]*alert{}
		}
	}
	return e
}

// Query evaluates expr at ts and returns its result as a vector (a scalar
// result is a vector of one sample without labels).
func (e *Evaluator) Query(ctx context.Context, expr string, ts time.Time) (promql.Vector, error) {
	q, err := e.engine.NewInstantQuery(ctx, e.store, nil, expr, ts)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return nil, res.Err
	}
	switch v := res.Value.(type) {
	case promql.Vector:
		return v, nil
	case promql.Scalar:
		return promql.Vector{{T: v.T, F: v.V}}, nil
	}
	return nil, fmt.Errorf("promql: %q returned a %s, not a vector", expr, res.Value.Type())
}

// Holds reports whether expr returns at least one sample at ts (how
// Prometheus decides an alert condition holds).
func (e *Evaluator) Holds(ctx context.Context, expr string, ts time.Time) (bool, error) {
	v, err := e.Query(ctx, expr, ts)
	return len(v) > 0, err
}

// Eval evaluates every rule at ts and returns the alerts that changed
// state, ordered by rule then labels. Times must not go backwards.
func (e *Evaluator) Eval(ctx context.Context, ts time.Time) ([]Change, error) {
	var out []Change
	for i, r := range e.rules.List {
		ch, err := e.evalRule(ctx, i, r, ts)
		if err != nil {
			return out, fmt.Errorf("%s: rule %s: %w", r.File, r.Name, err)
		}
		out = append(out, ch...)
	}
	return out, nil
}

// evalRule is AlertingRule.Eval without templates, notifications or
// ALERTS series: the same transitions at the same evaluation times.
func (e *Evaluator) evalRule(ctx context.Context, i int, r *Rule, ts time.Time) ([]Change, error) {
	res, err := e.Query(ctx, r.Expr, ts)
	if err != nil {
		return nil, err
	}
	active := e.active[i]
	seen := map[uint64]bool{}
	lb := labels.NewBuilder(labels.EmptyLabels())
	var changes []Change
	for _, smpl := range res {
		lb.Reset(smpl.Metric)
		lb.Del(model.MetricNameLabel)
		for k, v := range r.Labels {
			lb.Set(k, v)
		}
		lb.Set(labels.AlertName, r.Name)
		ls := lb.Labels()
		h := ls.Hash()
		if seen[h] {
			return nil, fmt.Errorf("vector contains metrics with the same labelset after applying alert labels")
		}
		seen[h] = true
		if a, ok := active[h]; ok && a.state != Inactive {
			a.value = smpl.F
			continue
		}
		from := Inactive
		if a, ok := active[h]; ok {
			from = a.state
		}
		active[h] = &alert{labels: ls, state: Pending, activeAt: ts, value: smpl.F}
		changes = append(changes, Change{At: ts, Rule: r, Labels: ls.String(), From: from, To: Pending, Value: smpl.F})
	}
	for h, a := range active {
		if !seen[h] {
			keepFiring := false
			if a.state == Firing && r.KeepFiringFor > 0 {
				if a.keepFiringSince.IsZero() {
					a.keepFiringSince = ts
				}
				keepFiring = ts.Sub(a.keepFiringSince) < r.KeepFiringFor
			}
			if a.state == Pending || (!a.resolvedAt.IsZero() && ts.Sub(a.resolvedAt) > resolvedRetention) {
				delete(active, h)
			}
			if a.state != Inactive && !keepFiring {
				changes = append(changes, Change{At: ts, Rule: r, Labels: a.labels.String(), From: a.state, To: Inactive, Value: a.value})
				a.state, a.resolvedAt = Inactive, ts
			}
			if !keepFiring {
				continue
			}
		} else {
			a.keepFiringSince = time.Time{}
		}
		if a.state == Pending && ts.Sub(a.activeAt) >= r.For {
			a.state = Firing
			changes = append(changes, Change{At: ts, Rule: r, Labels: a.labels.String(), From: Pending, To: Firing, Value: a.value})
		}
	}
	slices.SortFunc(changes, func(a, b Change) int {
		if c := strings.Compare(a.Labels, b.Labels); c != 0 {
			return c
		}
		return order(a.To) - order(b.To)
	})
	return changes, nil
}

func order(s State) int {
	switch s {
	case Pending:
		return 0
	case Firing:
		return 1
	}
	return 2
}
