package mockprovider

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
	"github.com/brownout-dev/brownout/llm/responses"
)

// Plan is what the provider will do with one request (see faults.Plan).
type Plan = faults.Plan

// Meta is what the model may know of a request beyond its body.
type Meta struct {
	// RequestID is the x-request-id the client sent (journaled).
	RequestID string
	// Headers are request headers, keys in lower case (fault selectors match them).
	Headers map[string]string
	// Stream overrides req.Stream when the wire format carries it outside
	// the body (Gemini's streamGenerateContent).
	Stream bool
}

// Model is the behaviour of one provider, without I/O: given a request, the
// time and its seeded source it plans the answer. Time is always an
// argument; the model never reads the clock. It is safe for concurrent use:
// a mutex serializes planning, so the same seed and the same order of
// requests give the same plans. (A Planner is the same behaviour for one
// goroutine.)
type Model struct {
	mu sync.Mutex
	// solo: the model is a Planner's, used by one goroutine: the mutex is
	// not used.
	solo   bool
	spec   ProviderSpec
	rnd    *rand.Rand
	models []modelState
	rules  []Rule
	set    faults.Set
	limit  *limiter
	cache  *promptCache
	seq    uint64
	jr     journal
	// stats holds the scalar counters; the maps are built by Stats from
	// byStatus, byOutcome and byModel.
	stats     Stats
	byStatus  counts[int]
	byOutcome counts[Outcome]
	byModel   counts[string]
	// headers is set while a fault selects on request headers.
	headers atomic.Bool
	// memo remembers the prompts a Planner sees (nil for a Model).
	memo *promptMemo
	// scratch is the fault environment of the plan being built.
	scratch faults.Env
	// schemas caches prepared JSON schemas (tool parameters, response
	// formats) by their text; lastSchema is the last one used. See schema.
	schemas    map[string]*schemaPlan
	lastSchema *schemaPlan
	// corpus is the filler text answers are windows of, generated from
	// corpusSeed by NewModel (by the first filler answer for a proxy).
	corpus     *corpus
	corpusSeed uint64
	// ids holds response IDs drawn in a batch; the next is ids[:idLen].
	ids   string
	idLen int
	idBuf []byte // scratch of fillIDs
}

// lock and unlock guard the model's state, unless it is a Planner's.
func (m *Model) lock() {
	if !m.solo {
		m.mu.Lock()
	}
}

func (m *Model) unlock() {
	if !m.solo {
		m.mu.Unlock()
	}
}

type modelState struct {
	spec  ModelSpec
	limit *limiter
	ttft  faults.Sampler // spec.TTFT, prepared
}

// DefaultJournalSize bounds the journal when the spec does not.
const DefaultJournalSize = 100_000

// NewModel returns the model of a provider. rnd is its only source of
// randomness; nil seeds one from spec.Seed (default 1). The spec's faults are
// activated by the first request (their windows count from it); use AddFault
// to activate faults at a given time.
func NewModel(spec ProviderSpec, rnd *rand.Rand) (*Model, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("provider %q: %w", spec.Name, err)
	}
	if rnd == nil {
		seed := spec.Seed
		if seed == 0 {
			seed = 1
		}
		rnd = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	m := &Model{spec: spec, rnd: rnd, limit: newLimiter(spec.Capacity), cache: newPromptCache(spec.PromptCache)}
	m.corpusSeed = rnd.Uint64()
	if spec.ProxyTo == "" {
		// Now rather than on the first filler answer, which it would delay
		// (a server times the answer from the request's arrival).
		m.corpus = newCorpus(m.corpusSeed, corpusTokens)
	}
	for _, ms := range spec.Models {
		m.models = append(m.models, modelState{spec: ms, limit: newLimiter(ms.Capacity), ttft: ms.TTFT.Sampler()})
	}
	m.rules = append([]Rule(nil), spec.Rules...)
	for i := range m.rules {
		if m.rules[i].Regex != "" {
			m.rules[i].re = regexp.MustCompile(m.rules[i].Regex) // validated
		}
	}
	for _, f := range spec.Faults {
		if _, err := m.set.Add(time.Time{}, f); err != nil {
			return nil, err
		}
	}
	m.headers.Store(m.set.MatchesHeaders())
	m.jr.provider = spec.Name
	m.jr.max = spec.JournalSize
	if m.jr.max == 0 {
		m.jr.max = DefaultJournalSize
	}
	m.resetStats()
	return m, nil
}

// Spec returns the provider spec the model was built from.
func (m *Model) Spec() ProviderSpec { return m.spec }

// Name returns the provider name.
func (m *Model) Name() string { return m.spec.Name }

// Format returns the provider's wire format.
func (m *Model) Format() llm.Format { return m.spec.Format }

func (m *Model) resetStats() {
	m.stats = Stats{Provider: m.spec.Name}
	m.byStatus, m.byOutcome, m.byModel = counts[int]{}, counts[Outcome]{}, counts[string]{}
}

// counts counts occurrences of keys: the first few keys in slices (a
// linear search, cheaper than hashing for the handful of statuses,
// outcomes and models a provider sees), the others in a map.
type counts[K comparable] struct {
	keys []K
	n    []int
	more map[K]int
}

// countsInline is the number of keys counts keeps in its slices.
const countsInline = 16

func (c *counts[K]) add(k K) {
	for i := range c.keys {
		if c.keys[i] == k {
			c.n[i]++
			return
		}
	}
	if len(c.keys) < countsInline {
		c.keys = append(c.keys, k)
		c.n = append(c.n, 1)
		return
	}
	if c.more == nil {
		c.more = map[K]int{}
	}
	c.more[k]++
}

// m returns the counts as a new map.
func (c *counts[K]) m() map[K]int {
	out := make(map[K]int, len(c.keys)+len(c.more))
	for i, k := range c.keys {
		out[k] = c.n[i]
	}
	for k, n := range c.more {
		out[k] = n
	}
	return out
}

// AddFault activates a fault at now and returns its id.
func (m *Model) AddFault(now time.Time, f faults.Spec) (string, error) {
	m.lock()
	defer m.unlock()
	defer m.headers.Store(m.set.MatchesHeaders())
	return m.set.Add(now, f)
}

// RemoveFault deactivates a fault; it reports whether the id was active.
func (m *Model) RemoveFault(id string) bool {
	m.lock()
	defer m.unlock()
	defer m.headers.Store(m.set.MatchesHeaders())
	return m.set.Remove(id)
}

// ResetFaults removes every fault.
func (m *Model) ResetFaults() {
	m.lock()
	defer m.unlock()
	m.set.Reset()
	m.headers.Store(false)
}

// NeedsHeaders reports whether an active fault selects on request headers;
// servers pass Meta.Headers only then.
func (m *Model) NeedsHeaders() bool { return m.headers.Load() }

// Faults returns the active faults with their counters.
func (m *Model) Faults() []faults.Active {
	m.lock()
	defer m.unlock()
	return m.set.List()
}

// Reset removes every fault and clears the journal, the statistics and the
// prompt cache (Toxiproxy's /reset). In-flight attempts still finish.
func (m *Model) Reset() {
	m.lock()
	defer m.unlock()
	m.set.Reset()
	m.headers.Store(false)
	m.jr.reset()
	inflight := m.stats.InFlight
	m.resetStats()
	m.stats.InFlight = inflight
	if m.cache != nil {
		m.cache.reset()
	}
}

func (m *Model) lookup(name string) *modelState {
	for i := range m.models {
		if m.models[i].spec.Name == name {
			return &m.models[i]
		}
	}
	for i := range m.models {
		if ok, _ := path.Match(m.models[i].spec.Name, name); ok {
			return &m.models[i]
		}
	}
	return nil
}

// Plan plans the answer to req arriving at now. Every plan is journaled and
// must be ended with Finish (or FinishSent) so its concurrency slot is
// released. The steps, in order: model lookup (404), prefill and context
// window checks (400), capacity (shed), content and timing, usage and the
// prompt cache, then the active faults in their defined order.
func (m *Model) Plan(now time.Time, req *llm.Request, meta Meta) *Plan {
	m.lock()
	defer m.unlock()
	p := faults.NewPlan()
	m.plan(p, now, req, meta, false)
	return p
}

// plan fills p, a new plan, for req. With reuse, p's token times are
// written into the buffer p.TokenTimes holds when it is large enough (a
// Planner's plans keep theirs from one request to the next).
func (m *Model) plan(p *Plan, now time.Time, req *llm.Request, meta Meta, reuse bool) {
	keep := p.TokenTimes
	p.TokenTimes = nil
	times := func(n int) []time.Duration {
		if !reuse {
			return nil // SetTokenized and SetContent make them
		}
		if cap(keep) >= n {
			return keep[:n] // timing writes them all
		}
		return make([]time.Duration, n, max(n, 2*cap(keep), 64))
	}
	m.seq++
	p.Seq = m.seq
	p.Stream = req.Stream || meta.Stream
	prompt := m.promptTokens(req)
	entry := JournalEntry{Seq: p.Seq, Time: now, RequestID: meta.RequestID, Provider: m.spec.Name,
		Model: req.Model, Stream: p.Stream, PromptTokens: prompt, Outcome: OutcomePending}
	m.stats.Requests++
	m.byModel.add(req.Model)

	ms := m.lookup(req.Model)
	switch {
	case ms == nil:
		e := faults.ProviderError(m.spec.Format, 404, llm.ErrNotFound, codecs.Wording(m.spec.Format).ModelNotFoundText(req.Model))
		e.Param = "model"
		p.SetError(e)
	case !ms.spec.Prefill.Accepts() && len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == llm.RoleAssistant:
		e := faults.ProviderError(m.spec.Format, 400, llm.ErrInvalidRequest,
			"This model does not support assistant message prefill. The conversation must end with a user message.")
		e.Param = "messages"
		p.SetError(e)
	case ms.spec.ContextWindow > 0 && prompt+req.MaxTokens > ms.spec.ContextWindow:
		p.SetError(faults.ContextLengthError(m.spec.Format, ms.spec.ContextWindow, prompt+req.MaxTokens, ""))
	}
	if p.Terminal() {
		m.record(p, &entry, nil)
		p.TokenTimes = keep[:0] // no tokens; the buffer stays for the next plan
		return
	}

	// Length first: TPM admission counts prompt plus planned output.
	n := ms.spec.OutputTokens.Sample(m.rnd)
	limitOut := 0
	if req.MaxTokens > 0 {
		limitOut = req.MaxTokens
	}
	if ms.spec.MaxOutputTokens > 0 && (limitOut == 0 || ms.spec.MaxOutputTokens < limitOut) {
		limitOut = ms.spec.MaxOutputTokens
	}
	cost := prompt + n
	if limitOut > 0 {
		cost = prompt + min(n, limitOut)
	}
	if reason, wait := m.admit(now, ms, cost); reason != "" {
		entry.Shed = reason
		m.shed(p, reason, wait, now, ms)
		m.record(p, &entry, nil)
		p.TokenTimes = keep[:0]
		return
	}
	p.Headers = m.rateHeaders(now, ms, nil)

	text, chunks, calls, ignored := m.content(req, req.Model, ms, n)
	// A prefill ignored by an answer that does not begin with it: a
	// gateway that serves it after the prefill splices two answers.
	p.Corrupted = ignored
	p.Response = llm.Response{
		ID: m.responseID(), Model: req.Model, Created: now.Unix(),
		FinishReason: llm.FinishStop,
	}
	if chunks != nil {
		p.TokenTimes = times(len(chunks))
		p.SetTokenized(text, chunks) // a window of the corpus, shared
		p.Filler = text
	} else {
		p.Response.ToolCalls = calls
		if len(calls) > 0 {
			p.Response.FinishReason = llm.FinishToolCalls
		} else if reuse {
			if k := faults.CountTokens(text); k > 0 {
				p.TokenTimes = times(k) // SetContent keeps them
			}
		}
		p.SetContent(text) // chunks, tool starts, output usage
	}
	if limitOut > 0 && len(p.Chunks) > limitOut {
		p.TruncateAt(limitOut)
		p.Response.FinishReason = llm.FinishLength
		if p.Filler != "" {
			p.Filler = p.Response.Content // a shorter window
		}
	}
	m.timing(p, ms)
	cached := m.cache.lookup(now, req.Model, req, m.memo)
	entry.CachedTokens = cached
	p.Response.Usage.InputTokens = prompt
	p.Response.Usage.CachedInputTokens = cached

	// The faults see the environment through a pointer; a scratch value held
	// by the model (under m.mu) spares an allocation per plan.
	if m.set.Len() > 0 {
		m.scratch = m.env(req, meta, prompt)
		m.set.Apply(now, p, &m.scratch)
		m.scratch = faults.Env{}
	}
	m.record(p, &entry, ms)
}

// timing draws TTFT and the token times. The gaps' jitter comes from a
// splitmix64 sequence seeded by one draw from the model's source, four
// 16-bit uniforms per 64-bit value; times add up in whole nanoseconds.
func (m *Model) timing(p *Plan, st *modelState) {
	ms := &st.spec
	if !st.ttft.IsZero() {
		p.TTFT = st.ttft.Sample(m.rnd)
	}
	n := len(p.Chunks)
	if cap(p.TokenTimes) < n {
		p.TokenTimes = make([]time.Duration, n)
	}
	times := p.TokenTimes[:n]
	p.TokenTimes = times
	if n == 0 {
		return
	}
	times[0] = p.TTFT
	if ms.TokensPerSecond <= 0 {
		for i := 1; i < n; i++ {
			times[i] = p.TTFT
		}
		return
	}
	gap := float64(time.Second) / ms.TokensPerSecond
	j := ms.Jitter.F()
	t := p.TTFT
	if j <= 0 || n == 1 {
		g := time.Duration(gap)
		for i := 1; i < n; i++ {
			t += g
			times[i] = t
		}
		return
	}
	// A gap is gap*(1+j*d) with d uniform in [-1, 1]: for a 16-bit u,
	// d = u/half - 1, so the gap is lo + step*u, step in 1/65536 ns.
	const half = 65535.0 / 2
	step := int64(gap * j / half * 65536)
	lo := time.Duration(gap - gap*j)
	x := m.rnd.Uint64()
	i := 1
	for ; i+4 <= n; i += 4 {
		x += 0x9e3779b97f4a7c15
		b := splitmix(x)
		g0 := lo + time.Duration(step*int64(b&0xffff)>>16)
		g1 := lo + time.Duration(step*int64(b>>16&0xffff)>>16)
		g2 := lo + time.Duration(step*int64(b>>32&0xffff)>>16)
		g3 := lo + time.Duration(step*int64(b>>48)>>16)
		t0 := t + g0
		t1 := t0 + g1
		t2 := t1 + g2
		t = t2 + g3
		ts := times[i : i+4 : i+4]
		ts[0], ts[1], ts[2], ts[3] = t0, t1, t2, t
	}
	x += 0x9e3779b97f4a7c15
	b := splitmix(x)
	for ; i < n; i++ {
		t += lo + time.Duration(step*int64(b&0xffff)>>16)
		b >>= 16
		times[i] = t
	}
}

// splitmix is the output function of splitmix64 on state x.
func splitmix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// idBatch is the number of response IDs drawn at once (one string holds them).
const idBatch = 64

// responseID returns a response ID in the provider's style ("chatcmpl-"
// and 29 characters, "msg_01" and 22, or 22 for Gemini). IDs are made
// idBatch at a time into one string, from one draw.
func (m *Model) responseID() string {
	if len(m.ids) == 0 {
		m.fillIDs()
	}
	id := m.ids[:m.idLen]
	m.ids = m.ids[m.idLen:]
	return id
}

// idSymbols are the 64 symbols of response IDs, so six bits pick one: the
// alphabet and two of its letters again (IDs need not be uniform, only
// varied).
const idSymbols = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789Qz"

// idPairs holds the two symbols of each 12-bit value, the low six bits'
// first: writing two at a time halves the work of fillIDs.
var idPairs = func() (t [1 << 12][2]byte) {
	for v := range t {
		t[v] = [2]byte{idSymbols[v&63], idSymbols[v>>6]}
	}
	return t
}()

func (m *Model) fillIDs() {
	prefix, n := "chatcmpl-", 29
	switch m.spec.Format {
	case llm.FormatAnthropic:
		prefix, n = "msg_01", 22
	case llm.FormatGemini:
		prefix, n = "", 22
	case responses.Format:
		prefix, n = "resp_", 48
	}
	m.idLen = len(prefix) + n
	size := idBatch * m.idLen
	if len(m.idBuf) != size {
		m.idBuf = make([]byte, size)
	}
	// One draw seeds a splitmix64 sequence for the batch; a value gives ten
	// symbols, six bits each from the lowest.
	x := m.rnd.Uint64()
	for id := m.idBuf; len(id) > 0; id = id[m.idLen:] {
		copy(id, prefix)
		for s := id[len(prefix):m.idLen]; len(s) > 0; {
			x += 0x9e3779b97f4a7c15
			v := splitmix(x)
			if len(s) >= 10 {
				s = s[:len(s):len(s)]
				p0, p1, p2 := idPairs[v&0xfff], idPairs[v>>12&0xfff], idPairs[v>>24&0xfff]
				p3, p4 := idPairs[v>>36&0xfff], idPairs[v>>48&0xfff]
				s[0], s[1], s[2], s[3], s[4] = p0[0], p0[1], p1[0], p1[1], p2[0]
				s[5], s[6], s[7], s[8], s[9] = p2[1], p3[0], p3[1], p4[0], p4[1]
				s = s[10:]
				continue
			}
			for i := range s {
				s[i] = idSymbols[v&63]
				v >>= 6
			}
			s = s[len(s):]
		}
	}
	// The batch's one allocation: the string the IDs are cut from (the
	// bytes are the model's scratch, written again by the next batch).
	var sb strings.Builder
	sb.Grow(size)
	sb.Write(m.idBuf)
	m.ids = sb.String()
}

// admit checks the provider's and the model's capacity and takes a slot.
func (m *Model) admit(now time.Time, ms *modelState, cost int) (string, time.Duration) {
	if r, w := m.limit.check(now, cost); r != "" {
		return r, w
	}
	if r, w := ms.limit.check(now, cost); r != "" {
		return r, w
	}
	m.limit.take(cost)
	ms.limit.take(cost)
	return "", 0
}

// shed turns p into the provider's capacity refusal.
func (m *Model) shed(p *Plan, reason string, wait time.Duration, now time.Time, ms *modelState) {
	wait = max(wait.Round(time.Millisecond), time.Millisecond)
	var e *llm.Error
	switch {
	case reason == shedConcurrency && m.spec.Format == llm.FormatAnthropic:
		e = faults.ProviderError(m.spec.Format, 529, llm.ErrOverloaded, "")
	case reason == shedConcurrency && m.spec.Format == llm.FormatGemini:
		e = faults.ProviderError(m.spec.Format, 503, llm.ErrOverloaded, "")
	default:
		e = faults.ProviderError(m.spec.Format, 429, llm.ErrRateLimit, codecs.Wording(m.spec.Format).RateLimitText(reason, wait))
		if m.spec.Format == llm.FormatOpenAI && reason == shedTPM {
			e.ProviderType = "tokens" // OpenAI's error type for a TPM limit
		}
	}
	e.RetryAfter = wait
	p.Headers = m.rateHeaders(now, ms, p.Headers)
	p.SetError(e) // Gemini's codec also writes the delay as RetryInfo in the body
	p.Fault = ""
	m.stats.Shed++
}

// rateHeaders adds the provider's rate-limit headers (OpenAI x-ratelimit-*,
// Anthropic anthropic-ratelimit-*; Gemini sends none) when a rate limit is
// configured. The model's limits take precedence over the provider's.
func (m *Model) rateHeaders(now time.Time, ms *modelState, h map[string]string) map[string]string {
	l := ms.limit
	if l == nil || (l.rpm == nil && l.tpm == nil) {
		l = m.limit
	}
	if l == nil || (l.rpm == nil && l.tpm == nil) || m.spec.Format == llm.FormatGemini {
		return h
	}
	if h == nil {
		h = make(map[string]string, 8)
	}
	set := func(kind string, b *bucket) {
		if b == nil {
			return
		}
		b.advance(now)
		limit := strconv.Itoa(int(b.size))
		rem := strconv.Itoa(b.remaining())
		if m.spec.Format == llm.FormatAnthropic {
			reset := now.Add(b.resetIn()).UTC().Format(time.RFC3339)
			h["anthropic-ratelimit-"+kind+"-limit"] = limit
			h["anthropic-ratelimit-"+kind+"-remaining"] = rem
			h["anthropic-ratelimit-"+kind+"-reset"] = reset
			if kind == "tokens" {
				h["anthropic-ratelimit-input-tokens-limit"] = limit
				h["anthropic-ratelimit-input-tokens-remaining"] = rem
				h["anthropic-ratelimit-input-tokens-reset"] = reset
			}
			return
		}
		h["x-ratelimit-limit-"+kind] = limit
		h["x-ratelimit-remaining-"+kind] = rem
		h["x-ratelimit-reset-"+kind] = openAIReset(b.resetIn())
	}
	set("requests", l.rpm)
	set("tokens", l.tpm)
	return h
}

// openAIReset formats a reset delay as OpenAI does ("1s", "6m0s", "120ms").
func openAIReset(d time.Duration) string {
	if d < time.Second {
		return strconv.Itoa(int(d.Milliseconds())) + "ms"
	}
	return d.Round(time.Second).String()
}

// record journals the plan; admitted is the model whose capacity it holds
// (nil when it was not admitted).
func (m *Model) record(p *Plan, e *JournalEntry, admitted *modelState) *Plan {
	e.PlannedTokens = len(p.Chunks)
	e.Fault = p.Fault
	e.FaultIDs = p.FaultIDs
	e.Status = p.Status
	e.Corrupted = p.Corrupted
	e.FinishReason = p.Response.FinishReason
	// The entry says whether the attempt is open and what capacity it
	// holds, so Finish releases exactly what Plan took, once.
	m.jr.add(e, m.stateIndex(admitted))
	m.stats.InFlight++
	if p.Fault != "" {
		m.stats.Faulted++
	}
	return p
}

// stateIndex returns the journal's reference to ms (see jentry.admitted).
func (m *Model) stateIndex(ms *modelState) int16 {
	if ms == nil {
		return admittedNone
	}
	for i := range m.models {
		if &m.models[i] == ms {
			return int16(i)
		}
	}
	return admittedOther
}

// release frees the capacity an attempt held (see jentry.admitted).
func (m *Model) release(admitted int16) {
	if admitted == admittedNone {
		return
	}
	m.limit.release()
	if admitted >= 0 {
		m.models[admitted].limit.release()
	}
}

// PlannedOutcome is the outcome a plan leads to when executed in full.
func PlannedOutcome(p *Plan) (Outcome, int) {
	n := len(p.Chunks)
	switch {
	case p.Reset:
		return OutcomeReset, 0
	case p.HoldFor > 0:
		return OutcomeNoResponse, 0
	case p.Status < 200 || p.Status > 299:
		return OutcomeError, 0
	case p.InBandErr != nil && p.Stream && (!p.Cuts() || p.InBandAfter <= p.CutAfter) && (!p.StallCloses() || p.InBandAfter <= p.StallAfter):
		return OutcomeError, p.InBandAfter
	case p.Cuts() && (!p.StallCloses() || p.CutAfter <= p.StallAfter):
		return OutcomeCut, p.CutAfter
	case p.StallCloses():
		return OutcomeCut, p.StallAfter
	case p.Malformed():
		return OutcomeMalformed, n
	case p.NoDone && p.Stream:
		return OutcomeNoDone, n
	}
	return OutcomeOK, n
}

// Finish ends an attempt as planned: it releases its capacity and completes
// its journal entry with the planned outcome. The simulator calls it at
// now = arrival + p.End().
func (m *Model) Finish(now time.Time, p *Plan) {
	o, sent := PlannedOutcome(p)
	m.FinishSent(now, p, o, sent)
}

// FinishSent ends an attempt with what actually happened (the HTTP servers
// know when a client went away early).
func (m *Model) FinishSent(now time.Time, p *Plan, o Outcome, sent int) {
	m.lock()
	defer m.unlock()
	admitted, shed, open := m.jr.finish(p.Seq, now, o, sent, p.Status, p.Corrupted, p.Response.FinishReason)
	if !open {
		return // finished already, or not planned by this model
	}
	m.release(admitted)
	if shed {
		o = OutcomeShed
	}
	m.stats.InFlight--
	m.byStatus.add(p.Status)
	m.byOutcome.add(o)
	m.stats.TokensSent += sent
	if p.Corrupted {
		m.stats.Corrupted++
	}
}

// Journal returns a copy of the journal, oldest first.
func (m *Model) Journal() []JournalEntry {
	m.lock()
	defer m.unlock()
	return m.jr.all()
}

// JournalLen returns the number of entries in the journal.
func (m *Model) JournalLen() int {
	m.lock()
	defer m.unlock()
	return m.jr.n
}

// JournalEntries yields the journal's entries, oldest first, without
// copying the journal (a long simulated run journals millions of attempts).
// The model is locked while the loop runs: its body must not call the
// model.
func (m *Model) JournalEntries() iter.Seq[JournalEntry] {
	return func(yield func(JournalEntry) bool) {
		m.lock()
		defer m.unlock()
		m.jr.each(yield)
	}
}

// JournalSince yields the journal's entries from sequence number seq on
// (Seq >= seq), oldest first, without reading the older ones: a reader that
// follows the journal keeps the next Seq it wants. The model is locked
// while the loop runs: its body must not call the model.
func (m *Model) JournalSince(seq uint64) iter.Seq[JournalEntry] {
	return func(yield func(JournalEntry) bool) {
		m.lock()
		defer m.unlock()
		m.jr.eachFrom(seq, yield)
	}
}

// Stats returns the provider's counters.
func (m *Model) Stats() Stats {
	m.lock()
	defer m.unlock()
	s := m.stats
	s.ByStatus = m.byStatus.m()
	s.ByOutcome = m.byOutcome.m()
	s.ByModel = m.byModel.m()
	s.Faults = m.set.Len()
	return s
}

// PlanProxy starts an attempt that a proxy forwards to a real upstream: the
// provider's capacity is checked (a shed plan is returned as is), then the
// active faults are selected once and applied to a plan without content. If
// that plan is terminal (an error, a reset, a hold) the proxy executes it
// without calling the upstream; otherwise it builds the plan from the
// upstream's answer and calls ApplyFaults with the same selection.
func (m *Model) PlanProxy(now time.Time, req *llm.Request, meta Meta) (*Plan, []*faults.Active) {
	m.lock()
	defer m.unlock()
	m.seq++
	p := faults.NewPlan()
	p.Seq = m.seq
	p.Stream = req.Stream || meta.Stream
	prompt := PromptTokens(req)
	entry := JournalEntry{Seq: p.Seq, Time: now, RequestID: meta.RequestID, Provider: m.spec.Name,
		Model: req.Model, Stream: p.Stream, PromptTokens: prompt, Outcome: OutcomePending}
	m.stats.Requests++
	m.byModel.add(req.Model)
	ms := m.lookup(req.Model)
	if ms == nil {
		ms = &modelState{}
	}
	if reason, wait := m.admit(now, ms, prompt); reason != "" {
		entry.Shed = reason
		m.shed(p, reason, wait, now, ms)
		return m.record(p, &entry, nil), nil
	}
	env := m.env(req, meta, prompt)
	sel := m.set.Select(now, &env)
	faults.Apply(sel, p, &env)
	if !p.Terminal() {
		p.Fault, p.FaultIDs = "", nil // applied again to the upstream's answer
	}
	return m.record(p, &entry, ms), sel
}

// ApplyFaults applies a selection from PlanProxy to the plan built from the
// upstream's answer and updates the attempt's journal entry.
func (m *Model) ApplyFaults(p *Plan, req *llm.Request, meta Meta, sel []*faults.Active) {
	m.lock()
	defer m.unlock()
	env := m.env(req, meta, p.Response.Usage.InputTokens)
	faults.Apply(sel, p, &env)
	m.jr.update(p.Seq, func(e *JournalEntry) {
		e.PlannedTokens = len(p.Chunks)
		e.Fault = p.Fault
		e.FaultIDs = p.FaultIDs
		e.Status = p.Status
		e.Corrupted = p.Corrupted
		e.FinishReason = p.Response.FinishReason
	})
	if p.Fault != "" {
		m.stats.Faulted++
	}
}

func (m *Model) env(req *llm.Request, meta Meta, prompt int) faults.Env {
	return faults.Env{Provider: m.spec.Name, Model: req.Model, Format: m.spec.Format, Headers: meta.Headers,
		Request: req, PromptTokens: prompt, Rand: m.rnd}
}
