package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/brownout-dev/brownout/gateway/policy"
)

// ErrUnavailable is returned by a store that cannot be reached.
var ErrUnavailable = errors.New("fleet: state store unavailable")

const millisecond = time.Millisecond

// Redis is a Store on a Redis 7 server (Valkey works too). Each breaker is
// one hash, "PREFIX:breaker:KEY" (state, version, open_until in Unix
// milliseconds, reason, trials left, successes, trials needed), changed
// only by Lua scripts, so every transition is atomic and compare-and-set
// on the version; each change is published on "PREFIX:breakers" as JSON.
// Hashes expire TTL after their last change.
type Redis struct {
	c      *redis.Client
	prefix string
	ttl    time.Duration
	calls  atomic.Uint64
}

var _ Store = (*Redis)(nil)

// RedisOptions configure a Redis store.
type RedisOptions struct {
	// Prefix starts every key and the channel. Default "brownout".
	Prefix string
	// TTL is how long a breaker's hash outlives its last change. Default 24h.
	TTL time.Duration
}

// NewRedis returns a store on the server at url ("redis://host:port/db",
// see redis.ParseURL). It does not connect until the first call.
func NewRedis(url string, o RedisOptions) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		// The URL may hold a password: name the problem, not the URL.
		return nil, fmt.Errorf("fleet: state.url is not a redis URL (redis://host:port/db)")
	}
	// Bounded everywhere: the caller's context sets each call's deadline;
	// these only cap what a context without one could wait.
	opt.DialTimeout = time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = 0 // the fleet retries by its own policy
	// Without it go-redis ignores the context's deadline on a blocked
	// read, and a slow store holds a call for ReadTimeout, not the fleet's
	// Options.Timeout.
	opt.ContextTimeoutEnabled = true
	if o.Prefix == "" {
		o.Prefix = "brownout"
	}
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	r := &Redis{c: redis.NewClient(opt), prefix: o.Prefix, ttl: o.TTL}
	r.c.AddHook(callCounter{&r.calls})
	return r, nil
}

// LogTo routes the Redis client's own log lines (go-redis writes a few:
// pool and connection troubles) to l as structured records at Warn,
// "msg" the text: with --log-format json no line is unstructured. The
// client's logger is process-wide, so the last call wins.
func LogTo(l *slog.Logger) {
	if l != nil {
		redis.SetLogger(redisLogger{l})
	}
}

type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, strings.TrimSpace(fmt.Sprintf(format, v...)), "component", "redis")
}

// Calls returns the round trips made to the server so far (a pipeline is
// one; the subscription's reads are not counted).
func (r *Redis) Calls() uint64 { return r.calls.Load() }

// callCounter is a go-redis hook that counts round trips.
type callCounter struct{ n *atomic.Uint64 }

func (callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// Close closes the connections.
func (r *Redis) Close() error { return r.c.Close() }

func (r *Redis) key(k string) string { return r.prefix + ":breaker:" + k }
func (r *Redis) channel() string     { return r.prefix + ":breakers" }

// The scripts return the state after as {state, version, open_until, reason}
// (Claim: the count). An absent hash is closed at version 0.
var (
	proposeScript = redis.NewScript(`
local v = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if v > tonumber(ARGV[1]) then
  local s = redis.call('HMGET', KEYS[1], 'state', 'version', 'open_until', 'reason')
  return {s[1] or 'closed', s[2] or '0', s[3] or '0', s[4] or ''}
end
v = tonumber(ARGV[1]) + 1
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'version', v, 'open_until', ARGV[3], 'reason', ARGV[4], 'left', ARGV[5], 'ok', 0, 'need', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
local msg = cjson.encode({key = ARGV[8], state = ARGV[2], version = v, open_until = tonumber(ARGV[3]), reason = ARGV[4]})
redis.call('PUBLISH', ARGV[7], msg)
return {ARGV[2], tostring(v), ARGV[3], ARGV[4]}
`)
	claimScript = redis.NewScript(`
local s = redis.call('HMGET', KEYS[1], 'state', 'version', 'left')
if s[1] ~= 'half_open' or s[2] ~= ARGV[1] then return 0 end
local n = math.min(tonumber(ARGV[2]), tonumber(s[3] or '0'))
if n > 0 then redis.call('HINCRBY', KEYS[1], 'left', -n) end
return n
`)
	trialScript = redis.NewScript(`
local s = redis.call('HMGET', KEYS[1], 'state', 'version', 'open_until', 'reason', 'need')
if s[1] ~= 'half_open' or s[2] ~= ARGV[1] then
  return {s[1] or 'closed', s[2] or '0', s[3] or '0', s[4] or ''}
end
local ok = redis.call('HINCRBY', KEYS[1], 'ok', 1)
if ok < tonumber(s[5] or '1') then return {s[1], s[2], s[3], s[4]} end
local v = tonumber(s[2]) + 1
redis.call('HSET', KEYS[1], 'state', 'closed', 'version', v, 'open_until', 0, 'reason', 'trials_succeeded', 'left', 0, 'ok', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], cjson.encode({key = ARGV[4], state = 'closed', version = v, open_until = 0, reason = 'trials_succeeded'}))
return {'closed', tostring(v), '0', 'trials_succeeded'}
`)
)

func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

// update reads a script's {state, version, open_until, reason} reply.
func update(key string, v any) (policy.BreakerUpdate, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 4 {
		return policy.BreakerUpdate{}, fmt.Errorf("fleet: unexpected reply %v", v)
	}
	str := func(i int) string { s, _ := a[i].(string); return s }
	ver, err := strconv.ParseUint(str(1), 10, 64)
	if err != nil {
		return policy.BreakerUpdate{}, fmt.Errorf("fleet: bad version %q", str(1))
	}
	until, _ := strconv.ParseInt(str(2), 10, 64)
	return policy.BreakerUpdate{Key: key, State: policy.BreakerState(str(0)), Version: ver, OpenUntil: fromMS(until), Reason: str(3)}, nil
}

// Propose implements Store.
func (r *Redis) Propose(ctx context.Context, p policy.Proposal, need int) (policy.BreakerUpdate, error) {
	v, err := proposeScript.Run(ctx, r.c, []string{r.key(p.Key)},
		p.Base, string(p.State), ms(p.OpenUntil), p.Reason, need, r.ttl.Milliseconds(), r.channel(), p.Key).Result()
	if err != nil {
		return policy.BreakerUpdate{}, unavailable(err)
	}
	return update(p.Key, v)
}

// Claim implements Store.
func (r *Redis) Claim(ctx context.Context, key string, version uint64, want int) (int, error) {
	n, err := claimScript.Run(ctx, r.c, []string{r.key(key)}, strconv.FormatUint(version, 10), want).Int()
	return n, unavailable(err)
}

// Trial implements Store.
func (r *Redis) Trial(ctx context.Context, key string, version uint64) (policy.BreakerUpdate, error) {
	v, err := trialScript.Run(ctx, r.c, []string{r.key(key)}, strconv.FormatUint(version, 10), r.ttl.Milliseconds(), r.channel(), key).Result()
	if err != nil {
		return policy.BreakerUpdate{}, unavailable(err)
	}
	return update(key, v)
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, keys []string) ([]policy.BreakerUpdate, error) {
	pipe := r.c.Pipeline()
	cmds := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.HMGet(ctx, r.key(k), "state", "version", "open_until", "reason")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable(err)
	}
	out := make([]policy.BreakerUpdate, len(keys))
	for i, c := range cmds {
		a := c.Val()
		for j := range a {
			if a[j] == nil {
				a[j] = []string{"closed", "0", "0", ""}[j]
			}
		}
		u, err := update(keys[i], a)
		if err != nil {
			return nil, err
		}
		out[i] = u
	}
	return out, nil
}

// message is what the scripts publish.
type message struct {
	Key       string `json:"key"`
	State     string `json:"state"`
	Version   uint64 `json:"version"`
	OpenUntil int64  `json:"open_until"`
	Reason    string `json:"reason"`
}

// Subscribe implements Store.
func (r *Redis) Subscribe(ctx context.Context, ready func(), fn func(policy.BreakerUpdate)) error {
	sub := r.c.Subscribe(ctx, r.channel())
	// A blocked read does not watch ctx: closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { sub.Close() })
	defer func() {
		stop()
		sub.Close()
	}()
	// Receive the subscription's confirmation, so changes published after
	// Subscribe returned its first message are not missed.
	if _, err := sub.Receive(ctx); err != nil {
		return unavailable(err)
	}
	ready()
	for {
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return unavailable(err)
		}
		var m message
		if err := json.Unmarshal([]byte(msg.Payload), &m); err != nil {
			continue // not ours
		}
		fn(policy.BreakerUpdate{Key: m.Key, State: policy.BreakerState(m.State), Version: m.Version, OpenUntil: fromMS(m.OpenUntil), Reason: m.Reason})
	}
}

// Ping implements Store.
func (r *Redis) Ping(ctx context.Context) error { return unavailable(r.c.Ping(ctx).Err()) }
