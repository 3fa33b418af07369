package fleet

import (
	"testing"

	"github.com/brownout-dev/brownout/internal/redistest"
)

// redisServer is a real redis-server for the fleet's tests.
type redisServer struct{ *redistest.Server }

func startRedis(tb testing.TB) redisServer { return redisServer{redistest.Start(tb)} }

func (s redisServer) url() string { return s.URL() }
func (s redisServer) start()      { s.Start() }
func (s redisServer) stop()       { s.Stop() }
