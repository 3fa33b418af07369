package fleet

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Buckets are token buckets a fleet shares: a client's tokens per minute,
// one bucket for every replica. Admission draws a request's worst case
// (Draw) in one atomic step, so the replicas together admit no more than
// the bucket holds; the syncs settle what the ended requests really used
// against what they drew (Settle). A bucket refills at perMinute a minute
// up to a burst of perMinute, like the replica's own (package clients), on
// the callers' clocks.
type Buckets interface {
	// Draw takes n from key's bucket as of now if it holds min(n,
	// perMinute), and reports whether it did; if not, how long until it
	// would (at least 1ms).
	Draw(ctx context.Context, key string, perMinute, n float64, now time.Time) (ok bool, wait time.Duration, err error)
	// Settle takes delta from key's bucket as of now whatever it holds (it
	// may go into debt); a negative delta gives back, up to the burst.
	Settle(ctx context.Context, key string, perMinute, delta float64, now time.Time) error
}

// TokensKey is the Buckets key of a client's tokens per minute.
func TokensKey(client string) string { return "tokens:" + client }

// bucketTTL is how long an untouched bucket is kept: a full refill, and a
// margin. A bucket not kept is full, as a new one is.
const bucketTTL = 2 * time.Minute

// bucketState is a bucket's level as of last.
type bucketState struct {
	level float64
	last  int64 // unix ms; 0: new (full)
}

// refill brings b to now (ms), never backwards.
func (b *bucketState) refill(perMinute float64, now int64) {
	if b.last == 0 {
		b.level, b.last = perMinute, now
		return
	}
	if dt := now - b.last; dt > 0 {
		b.level = math.Min(perMinute, b.level+float64(dt)*perMinute/60000)
		b.last = now
	}
}

// draw is Draw's rule on b.
func (b *bucketState) draw(perMinute, n float64, now int64) (bool, time.Duration) {
	b.refill(perMinute, now)
	need := math.Min(n, perMinute)
	if b.level >= need {
		b.level -= n
		return true, 0
	}
	ms := math.Ceil((need - b.level) * 60000 / perMinute)
	return false, max(time.Duration(ms)*time.Millisecond, time.Millisecond)
}

// settle is Settle's rule on b.
func (b *bucketState) settle(perMinute, delta float64, now int64) {
	b.refill(perMinute, now)
	b.level = math.Min(perMinute, b.level-delta)
}

// Draw implements Buckets.
func (m *Memory) Draw(_ context.Context, key string, perMinute, n float64, now time.Time) (bool, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, err := m.bucket(key)
	if err != nil {
		return false, 0, err
	}
	ok, wait := b.draw(perMinute, n, now.UnixMilli())
	return ok, wait, nil
}

// Settle implements Buckets.
func (m *Memory) Settle(_ context.Context, key string, perMinute, delta float64, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, err := m.bucket(key)
	if err != nil {
		return err
	}
	b.settle(perMinute, delta, now.UnixMilli())
	return nil
}

// bucket is key's bucket, new when it was not kept (m.mu held).
func (m *Memory) bucket(key string) (*bucketState, error) {
	if m.down {
		return nil, ErrUnavailable
	}
	if m.buckets == nil {
		m.buckets = map[string]*memBucket{}
	}
	now := m.now()
	b := m.buckets[key]
	if b == nil || !now.Before(b.expires) {
		b = &memBucket{}
		m.buckets[key] = b
	}
	b.expires = now.Add(bucketTTL)
	return &b.bucketState, nil
}

type memBucket struct {
	bucketState
	expires time.Time
}

// bucketScript is Draw (ARGV[4] = "draw") and Settle ("settle") on a hash
// of level and last (unix ms); the rules are bucketState's.
var bucketScript = redis.NewScript(`
local per, n, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local level = tonumber(redis.call('HGET', KEYS[1], 'level') or '')
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '')
if level == nil or last == nil then
  level, last = per, now
elseif now > last then
  level = math.min(per, level + (now - last) * per / 60000)
  last = now
end
local ok, wait = 1, 0
if ARGV[4] == 'draw' then
  local need = math.min(n, per)
  if level >= need then
    level = level - n
  else
    ok, wait = 0, math.max(math.ceil((need - level) * 60000 / per), 1)
  end
else
  level = math.min(per, level - n)
end
redis.call('HSET', KEYS[1], 'level', tostring(level), 'last', tostring(last))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {ok, wait}
`)

func (r *Redis) runBucket(ctx context.Context, op, key string, perMinute, n float64, now time.Time) (bool, time.Duration, error) {
	v, err := bucketScript.Run(ctx, r.c, []string{r.shared(key)}, fmtFloat(perMinute), fmtFloat(n),
		strconv.FormatInt(now.UnixMilli(), 10), op, bucketTTL.Milliseconds()).Slice()
	if err != nil {
		return false, 0, unavailable(err)
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("fleet: bucket: unexpected reply %v", v)
	}
	ok, _ := v[0].(int64)
	wait, _ := v[1].(int64)
	return ok == 1, time.Duration(wait) * time.Millisecond, nil
}

// Draw implements Buckets.
func (r *Redis) Draw(ctx context.Context, key string, perMinute, n float64, now time.Time) (bool, time.Duration, error) {
	return r.runBucket(ctx, "draw", key, perMinute, n, now)
}

// Settle implements Buckets.
func (r *Redis) Settle(ctx context.Context, key string, perMinute, delta float64, now time.Time) error {
	_, _, err := r.runBucket(ctx, "settle", key, perMinute, delta, now)
	return err
}

var (
	_ Buckets = (*Memory)(nil)
	_ Buckets = (*Redis)(nil)
)
