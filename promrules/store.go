package promrules

import (
	"context"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
)

// Store holds scraped float samples in memory, appended in time order: the
// part of a Prometheus server's TSDB that rule evaluation reads. It is a
// storage.Queryable for the PromQL engine.
type Store struct {
	// TargetLabels are added to every series AppendFamilies adds, as a
	// scrape adds the target's job and instance; a series' own label of
	// the same name becomes exported_<name>, as Prometheus does without
	// honor_labels.
	TargetLabels labels.Labels

	byHash map[uint64]*series
	all    []*series // sorted by labels
	sorted bool
	lb     labels.ScratchBuilder
}

type series struct {
	lset labels.Labels
	pts  []fsample
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{byHash: map[uint64]*series{}, sorted: true} }

// Append adds a sample of the series lset at t. Samples of a series must
// come in time order; a sample at or before the series' last is dropped,
// as a Prometheus server drops out-of-order samples.
func (s *Store) Append(lset labels.Labels, t time.Time, v float64) {
	h := lset.Hash()
	sr := s.byHash[h]
	if sr == nil {
		sr = &series{lset: lset}
		s.byHash[h] = sr
		s.all = append(s.all, sr)
		s.sorted = false
	}
	ms := t.UnixMilli()
	if n := len(sr.pts); n > 0 && sr.pts[n-1].t >= ms {
		return
	}
	sr.pts = append(sr.pts, fsample{ms, v})
}

// AppendFamilies adds the samples of a scrape (what a prometheus.Gatherer
// returns) at t, named as the text exposition names them: counters and
// gauges by their name, histograms as _bucket{le}, _sum and _count,
// summaries as {quantile}, _sum and _count.
func (s *Store) AppendFamilies(t time.Time, mfs []*dto.MetricFamily) {
	for _, mf := range mfs {
		name := mf.GetName()
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				s.Append(s.labels(name, m, "", ""), t, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				s.Append(s.labels(name, m, "", ""), t, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				s.Append(s.labels(name, m, "", ""), t, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					s.Append(s.labels(name+"_bucket", m, "le", formatLe(b.GetUpperBound())), t, float64(b.GetCumulativeCount()))
				}
				s.Append(s.labels(name+"_bucket", m, "le", "+Inf"), t, float64(h.GetSampleCount()))
				s.Append(s.labels(name+"_sum", m, "", ""), t, h.GetSampleSum())
				s.Append(s.labels(name+"_count", m, "", ""), t, float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				sm := m.GetSummary()
				for _, q := range sm.GetQuantile() {
					s.Append(s.labels(name, m, "quantile", formatLe(q.GetQuantile())), t, q.GetValue())
				}
				s.Append(s.labels(name+"_sum", m, "", ""), t, sm.GetSampleSum())
				s.Append(s.labels(name+"_count", m, "", ""), t, float64(sm.GetSampleCount()))
			}
		}
	}
}

// formatLe writes a bucket bound as a Prometheus 3 server stores it after
// a scrape (normalised floats: "1.0", "0.005", "+Inf").
func formatLe(f float64) string {
	if math.IsInf(f, +1) {
		return "+Inf"
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if f == math.Trunc(f) && !math.IsInf(f, 0) && len(s) < 16 {
		s += ".0"
	}
	return s
}

func (s *Store) labels(name string, m *dto.Metric, extra, value string) labels.Labels {
	s.lb.Reset()
	s.lb.Add(model.MetricNameLabel, name)
	for _, lp := range m.GetLabel() {
		n := lp.GetName()
		if s.TargetLabels.Has(n) {
			n = "exported_" + n
		}
		s.lb.Add(n, lp.GetValue())
	}
	s.TargetLabels.Range(func(l labels.Label) { s.lb.Add(l.Name, l.Value) })
	if extra != "" {
		s.lb.Add(extra, value)
	}
	s.lb.Sort()
	return s.lb.Labels()
}

// Querier implements storage.Queryable.
func (s *Store) Querier(mint, maxt int64) (storage.Querier, error) {
	if !s.sorted {
		sort.Slice(s.all, func(i, j int) bool { return labels.Compare(s.all[i].lset, s.all[j].lset) < 0 })
		s.sorted = true
	}
	return &querier{s: s, mint: mint, maxt: maxt}, nil
}

type querier struct {
	s          *Store
	mint, maxt int64
}

func (q *querier) Select(_ context.Context, _ bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	mint, maxt := q.mint, q.maxt
	if hints != nil {
		mint, maxt = hints.Start, hints.End
	}
	var out []storage.Series
	for _, sr := range q.s.all {
		if !matches(sr.lset, ms) {
			continue
		}
		lo := sort.Search(len(sr.pts), func(i int) bool { return sr.pts[i].t >= mint })
		hi := sort.Search(len(sr.pts), func(i int) bool { return sr.pts[i].t > maxt })
		if lo >= hi {
			continue
		}
		out = append(out, &listSeries{lset: sr.lset, pts: sr.pts[lo:hi]})
	}
	return &seriesSet{list: out, i: -1}
}

func matches(l labels.Labels, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if !m.Matches(l.Get(m.Name)) {
			return false
		}
	}
	return true
}

func (q *querier) LabelValues(_ context.Context, name string, _ *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	var out []string
	for _, sr := range q.s.all {
		if v := sr.lset.Get(name); v != "" && matches(sr.lset, ms) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil, nil
}

func (q *querier) LabelNames(_ context.Context, _ *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	var out []string
	for _, sr := range q.s.all {
		if !matches(sr.lset, ms) {
			continue
		}
		sr.lset.Range(func(l labels.Label) {
			if !slices.Contains(out, l.Name) {
				out = append(out, l.Name)
			}
		})
	}
	slices.Sort(out)
	return out, nil, nil
}

func (q *querier) Close() error { return nil }

type seriesSet struct {
	list []storage.Series
	i    int
}

func (ss *seriesSet) Next() bool                        { ss.i++; return ss.i < len(ss.list) }
func (ss *seriesSet) At() storage.Series                { return ss.list[ss.i] }
func (ss *seriesSet) Err() error                        { return nil }
func (ss *seriesSet) Warnings() annotations.Annotations { return nil }

type listSeries struct {
	lset labels.Labels
	pts  []fsample
}

func (l *listSeries) Labels() labels.Labels { return l.lset }

func (l *listSeries) Iterator(chunkenc.Iterator) chunkenc.Iterator {
	return storage.NewListSeriesIterator(floats(l.pts))
}

// floats are a series' samples as storage.Samples; Get hands out a
// pointer into the slice, which boxes without allocating.
type floats []fsample

func (f floats) Get(i int) chunks.Sample { return &f[i] }
func (f floats) Len() int                { return len(f) }

// fsample is one float sample.
type fsample struct {
	t int64
	f float64
}

func (s *fsample) T() int64                      { return s.t }
func (s *fsample) ST() int64                     { return 0 }
func (s *fsample) F() float64                    { return s.f }
func (s *fsample) H() *histogram.Histogram       { return nil }
func (s *fsample) FH() *histogram.FloatHistogram { return nil }
func (s *fsample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s *fsample) Copy() chunks.Sample           { c := *s; return &c }
