package sdkcheck

import (
	"fmt"
	"strconv"
	"strings"
)

// MinNodeMajor is the oldest Node.js major version the pinned clients run
// on (their package.json engines ask for >=20).
const MinNodeMajor = 20

// NodeMajor reads the major version from `node --version` output
// ("v20.20.2").
func NodeMajor(version string) (int, error) {
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("sdkcheck: node version %q: not vMAJOR.MINOR.PATCH", version)
	}
	return n, nil
}
