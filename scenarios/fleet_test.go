package scenarios

import (
	"os"
	"os/exec"
	"testing"
)

// requireRedis skips a live test of a shared store without redis-server,
// unless BROWNOUT_REQUIRE_REDIS is set (CI), where it fails.
func requireRedis(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("BROWNOUT_REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is not installed and BROWNOUT_REQUIRE_REDIS is set (apt-get install redis-server)")
		}
		t.Skip("redis-server not installed (apt-get install redis-server); set BROWNOUT_REQUIRE_REDIS=1 to fail instead")
	}
}
