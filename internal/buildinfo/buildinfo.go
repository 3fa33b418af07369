// Package buildinfo says which build of brownout is running, from the Go
// build information: the module version when installed at a version,
// otherwise the VCS revision the binary was built from, marked "+dirty"
// when the work tree had changes. Builds from `make build` or `make
// install` carry the revision (they pass -buildvcs=auto, which a
// GOFLAGS=-buildvcs=false would otherwise turn off).
package buildinfo

import "runtime/debug"

// Version describes the running binary: "v0.3.1", the pseudo-version of a
// VCS build ("v0.0.0-20261202021827-cc2ba92c63db+dirty"), "(devel)
// 0123456789ab+dirty" when only the revision is known; "(devel)" when
// nothing is.
func Version() string { return Of(debug.ReadBuildInfo()) }

// Of describes the build bi (ok false: none).
func Of(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "(devel)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev, dirty := "", false
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.modified":
			dirty = st.Value == "true"
		}
	}
	if v != "(devel)" {
		// A release, or the toolchain's pseudo-version of a VCS build
		// (v0.0.0-20261202021827-cc2ba92c63db+dirty): it names the
		// commit and the dirty flag already.
		return v
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev
		if dirty {
			v += "+dirty"
		}
	}
	return v
}
