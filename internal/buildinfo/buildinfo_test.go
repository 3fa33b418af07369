package buildinfo

import (
	"fmt"
	"runtime/debug"
	"testing"
)

func TestOf(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	dirty := append(rev[:2:2], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "(devel)"},
		{"no vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "(devel)"},
		{"a revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, true, "(devel) 0123456789ab"},
		{"a dirty tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: dirty}, true, "(devel) 0123456789ab+dirty"},
		{"a release", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}, Settings: rev}, true, "v0.3.1"},
		{"a pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202021827-0123456789ab+dirty"}, Settings: dirty}, true,
			"v0.0.0-20261202021827-0123456789ab+dirty"},
	} {
		if got := Of(tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func ExampleOf() {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "cc2ba92c63dbae90474a"}, {Key: "vcs.modified", Value: "false"}}}
	fmt.Println(Of(bi, true))
	// Output: (devel) cc2ba92c63db
}
