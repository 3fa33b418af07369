package clientbench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/brownout-dev/brownout/internal/redistest"
)

// client is the fleet's use of a Redis client: a Lua script (breaker
// transitions, budget reports, client counters, idempotency claims), a
// GET of a record (idempotency, cache), a publish and the subscription
// that receives it (breaker propagation).
type client interface {
	script(ctx context.Context, key string) error
	get(ctx context.Context, key string) error
	publish(ctx context.Context, channel, msg string) error
	// subscribe calls fn with each message on channel until ctx ends.
	subscribe(ctx context.Context, channel string, ready func(), fn func(string))
	close()
}

// The script does what the claim script does: read a hash, change a field.
const claimLua = `
local s = redis.call('HMGET', KEYS[1], 'state', 'left')
local n = tonumber(s[2] or '0')
redis.call('HSET', KEYS[1], 'state', 'half_open', 'left', n + 1)
return n
`

type goRedis struct {
	c *redis.Client
	s *redis.Script
}

func newGoRedis(url string) (*goRedis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return &goRedis{c: redis.NewClient(opt), s: redis.NewScript(claimLua)}, nil
}

func (g *goRedis) script(ctx context.Context, key string) error {
	return g.s.Run(ctx, g.c, []string{key}).Err()
}

func (g *goRedis) get(ctx context.Context, key string) error {
	return g.c.Get(ctx, key).Err()
}

func (g *goRedis) publish(ctx context.Context, ch, msg string) error {
	return g.c.Publish(ctx, ch, msg).Err()
}

func (g *goRedis) subscribe(ctx context.Context, ch string, ready func(), fn func(string)) {
	sub := g.c.Subscribe(ctx, ch)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return
	}
	ready()
	c := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-c:
			fn(m.Payload)
		}
	}
}

func (g *goRedis) close() { g.c.Close() }

type rueidisClient struct {
	c rueidis.Client
	s *rueidis.Lua
}

func newRueidis(url string) (*rueidisClient, error) {
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	return &rueidisClient{c: c, s: rueidis.NewLuaScript(claimLua)}, nil
}

func (r *rueidisClient) script(ctx context.Context, key string) error {
	return r.s.Exec(ctx, r.c, []string{key}, nil).Error()
}

func (r *rueidisClient) get(ctx context.Context, key string) error {
	return r.c.Do(ctx, r.c.B().Get().Key(key).Build()).Error()
}

func (r *rueidisClient) publish(ctx context.Context, ch, msg string) error {
	return r.c.Do(ctx, r.c.B().Publish().Channel(ch).Message(msg).Build()).Error()
}

func (r *rueidisClient) subscribe(ctx context.Context, ch string, ready func(), fn func(string)) {
	var once sync.Once
	_ = r.c.Receive(rueidis.WithOnSubscriptionHook(ctx, func(rueidis.PubSubSubscription) { once.Do(ready) }),
		r.c.B().Subscribe().Channel(ch).Build(), func(m rueidis.PubSubMessage) { fn(m.Message) })
}

func (r *rueidisClient) close() { r.c.Close() }

func clients(b *testing.B) map[string]client {
	srv := redistest.Start(b)
	g, err := newGoRedis(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	r, err := newRueidis(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.close(); r.close() })
	// A record the size of a small idempotency record or cached answer.
	if err := g.c.Set(b.Context(), "bench:record", strings.Repeat("x", 1024), 0).Err(); err != nil {
		b.Fatal(err)
	}
	return map[string]client{"go-redis": g, "rueidis": r}
}

func quantiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Microsecond) }
	b.ReportMetric(q(.5), "p50-µs")
	b.ReportMetric(q(.99), "p99-µs")
}

// BenchmarkClients runs, per client: script and get (one caller,
// sequential: the fleet's goroutine), script-parallel (16 callers: the
// idempotency claims of concurrent requests) and pubsub (a publish until
// the subscriber has it: the transport of a breaker's propagation).
func BenchmarkClients(b *testing.B) {
	cs := clients(b)
	for _, name := range []string{"go-redis", "rueidis"} {
		c := cs[name]
		ctx := b.Context()
		b.Run(name+"/script", func(b *testing.B) {
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t := time.Now()
				if err := c.script(ctx, "bench:"+name); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			quantiles(b, lat)
		})
		b.Run(name+"/get", func(b *testing.B) {
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t := time.Now()
				if err := c.get(ctx, "bench:record"); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			quantiles(b, lat)
		})
		b.Run(name+"/script-parallel", func(b *testing.B) {
			b.SetParallelism(8) // 16 callers on 2 cores
			b.ReportAllocs()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.script(ctx, "bench:"+name); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
		b.Run(name+"/pubsub", func(b *testing.B) {
			ch := "bench:" + name + ":" + strings.ReplaceAll(b.Name(), "/", "-")
			got := make(chan string, 1)
			ready := make(chan struct{})
			sctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.subscribe(sctx, ch, func() { close(ready) }, func(m string) { got <- m })
			}()
			defer func() { cancel(); <-done }()
			<-ready
			var lat []time.Duration
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				msg := fmt.Sprint(i)
				t := time.Now()
				if err := c.publish(ctx, ch, msg); err != nil {
					b.Fatal(err)
				}
				for m := range got {
					if m == msg {
						break
					}
				}
				lat = append(lat, time.Since(t))
			}
			quantiles(b, lat)
		})
	}
}
