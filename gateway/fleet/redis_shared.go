package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Counters are hashes whose fields are the values' positions ("1", "2", …);
// reports are hashes of member → "unix_ms,v1,v2,…"; records are strings.
// Every key is "PREFIX:" + the caller's key and expires.
var (
	addScript = redis.NewScript(`
local out, a = {}, 1
for i, k in ipairs(KEYS) do
  local ttl, n = ARGV[a], tonumber(ARGV[a+1])
  a = a + 2
  local row = {}
  for j = 1, n do
    row[j] = redis.call('HINCRBYFLOAT', k, j, ARGV[a])
    a = a + 1
  end
  redis.call('PEXPIRE', k, ttl)
  out[i] = row
end
return out
`)
	reportScript = redis.NewScript(`
local member, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local out, a = {}, 4
for i, k in ipairs(KEYS) do
  local n = tonumber(ARGV[a])
  local mine = {ARGV[2]}
  for j = 1, n do mine[j+1] = ARGV[a+j] end
  a = a + n + 1
  redis.call('HSET', k, member, table.concat(mine, ','))
  redis.call('PEXPIRE', k, 2 * ttl)
  local sum = {}
  for j = 1, n do sum[j] = 0 end
  local all = redis.call('HGETALL', k)
  for f = 1, #all, 2 do
    if all[f] ~= member then
      local vals, at = {}, nil
      for x in string.gmatch(all[f+1], '[^,]+') do
        if at == nil then at = tonumber(x) else vals[#vals+1] = tonumber(x) end
      end
      if at == nil or now - at > ttl then
        redis.call('HDEL', k, all[f])
      else
        for j = 1, math.min(n, #vals) do sum[j] = sum[j] + vals[j] end
      end
    end
  end
  for j = 1, n do sum[j] = tostring(sum[j]) end
  out[i] = sum
end
return out
`)
	// reserveScript is Budgets.Reserve: fields 1 (spend) and 2
	// (reservations) of a counter; the rule is reserveFits'.
	reserveScript = redis.NewScript(`
local spent = tonumber(redis.call('HGET', KEYS[1], '1') or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], '2') or '0')
local budget, dollars = tonumber(ARGV[1]), tonumber(ARGV[2])
if spent >= budget or (reserved > 0 and spent + reserved + dollars > budget) then
  return {0, tostring(spent), tostring(reserved)}
end
reserved = tonumber(redis.call('HINCRBYFLOAT', KEYS[1], '2', ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, tostring(spent), tostring(reserved)}
`)
	createScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`)
	swapScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[4]) end
return 1
`)
)

func (r *Redis) shared(k string) string { return r.prefix + ":" + k }

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// rows reads a script's array of arrays of numbers as strings.
func rows(in []Row, v any) ([]Row, error) {
	a, ok := v.([]any)
	if !ok || len(a) != len(in) {
		return nil, fmt.Errorf("fleet: unexpected reply %v", v)
	}
	out := make([]Row, len(in))
	for i, x := range a {
		xs, _ := x.([]any)
		vals := make([]float64, len(in[i].Vals))
		for j := range min(len(xs), len(vals)) {
			s, _ := xs[j].(string)
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("fleet: bad number %q", s)
			}
			vals[j] = f
		}
		out[i] = Row{Key: in[i].Key, Vals: vals}
	}
	return out, nil
}

// Add implements Tally.
func (r *Redis) Add(ctx context.Context, in []Row) ([]Row, error) {
	if len(in) == 0 {
		return nil, nil
	}
	keys := make([]string, len(in))
	var args []any
	for i, row := range in {
		keys[i] = r.shared(row.Key)
		args = append(args, orTTL(row.TTL).Milliseconds(), len(row.Vals))
		for _, v := range row.Vals {
			args = append(args, fmtFloat(v))
		}
	}
	v, err := addScript.Run(ctx, r.c, keys, args...).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	return rows(in, v)
}

// Reserve implements Budgets.
func (r *Redis) Reserve(ctx context.Context, key string, budget, dollars float64, ttl time.Duration) (bool, float64, float64, error) {
	v, err := reserveScript.Run(ctx, r.c, []string{r.shared(key)}, fmtFloat(budget), fmtFloat(dollars), orTTL(ttl).Milliseconds()).Slice()
	if err != nil {
		return false, 0, 0, unavailable(err)
	}
	if len(v) != 3 {
		return false, 0, 0, fmt.Errorf("fleet: reserve: unexpected reply %v", v)
	}
	ok, _ := v[0].(int64)
	spent, err1 := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
	reserved, err2 := strconv.ParseFloat(fmt.Sprint(v[2]), 64)
	if err := errors.Join(err1, err2); err != nil {
		return false, 0, 0, fmt.Errorf("fleet: reserve: %w", err)
	}
	return ok == 1, spent, reserved, nil
}

// Report implements Tally.
func (r *Redis) Report(ctx context.Context, member string, now time.Time, ttl time.Duration, in []Row) ([]Row, error) {
	if len(in) == 0 {
		return nil, nil
	}
	keys := make([]string, len(in))
	args := []any{member, now.UnixMilli(), max(ttl.Milliseconds(), 1)}
	for i, row := range in {
		keys[i] = r.shared(row.Key)
		args = append(args, len(row.Vals))
		for _, v := range row.Vals {
			args = append(args, fmtFloat(v))
		}
	}
	v, err := reportScript.Run(ctx, r.c, keys, args...).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	return rows(in, v)
}

// Create implements Records.
func (r *Redis) Create(ctx context.Context, key string, val []byte, ttl time.Duration) ([]byte, bool, error) {
	cur, err := createScript.Run(ctx, r.c, []string{r.shared(key)}, val, max(ttl.Milliseconds(), 1)).Text()
	if errors.Is(err, redis.Nil) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	return []byte(cur), false, nil
}

// Swap implements Records.
func (r *Redis) Swap(ctx context.Context, key string, old, val []byte, ttl time.Duration) (bool, error) {
	del := "0"
	if val == nil {
		del = "1"
	}
	n, err := swapScript.Run(ctx, r.c, []string{r.shared(key)}, old, val, del, max(ttl.Milliseconds(), 1)).Int()
	if err != nil {
		return false, unavailable(err)
	}
	return n == 1, nil
}

// Load implements Records.
func (r *Redis) Load(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := r.c.Get(ctx, r.shared(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	return v, true, nil
}

// LoadMany implements Records.
func (r *Redis) LoadMany(ctx context.Context, keys []string) ([][]byte, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = r.shared(k)
	}
	vals, err := r.c.MGet(ctx, full...).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([][]byte, len(keys))
	for i, v := range vals {
		if s, ok := v.(string); ok {
			out[i] = []byte(s)
		}
	}
	return out, nil
}

// Put implements Records.
func (r *Redis) Put(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	return unavailable(r.c.Set(ctx, r.shared(key), val, max(ttl, time.Millisecond)).Err())
}
