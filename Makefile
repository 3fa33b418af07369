GO ?= go
PKGS := ./...
FUZZTIME ?= 10s
BENCHTIME ?= 1s
SCENARIO ?= examples/gamedays/primary-429-storm.yaml
# The profile `go build` optimizes the brownout binary with (profile-guided
# optimization); `make bench` builds with it too, PGO=off to compare.
PGO ?= $(CURDIR)/cmd/brownout/default.pgo

.PHONY: build install test checks live vet staticcheck staticcheck-tool otlpgrpc norace norace-long bench pgo fuzz demo clean

# Release builds leave out the symbol table and DWARF (-s -w); the build
# info (--version) stays. TAGS=otlpgrpc adds the OTLP/gRPC trace exporter.
# grpcnotrace keeps gRPC's golang.org/x/net/trace (and with it html/template's
# execution, whose reflect MethodByName stops the linker dropping unused
# methods) out of the binary: 21.9 MB, 32.5 MB without the tag (linux/amd64,
# Go 1.26.8, measured 2026-12-02).
LDFLAGS ?= -s -w
TAGS ?=
comma := ,
BUILDTAGS := grpcnotrace$(if $(TAGS),$(comma)$(TAGS))

build:
	$(GO) build -buildvcs=auto -tags '$(BUILDTAGS)' -ldflags '$(LDFLAGS)' -o bin/brownout ./cmd/brownout

# The brownout binary in $(go env GOPATH)/bin (or $GOBIN).
install:
	$(GO) install -buildvcs=auto -tags '$(BUILDTAGS)' -ldflags '$(LDFLAGS)' ./cmd/brownout

# make test's build of the packages, shared by vet, staticcheck and the
# race tests so that from an empty build cache the dependencies are
# compiled once with the race detector (and once without, for the
# scenarios' non-race pass). Without -pgo=off, cmd/brownout's tests and
# vet would compile its 500 dependencies a second time with the profile.
CHECKFLAGS := -race -pgo=off

# Every go vet check; make test runs them within the race tests instead
# (go test -vet=all, on the same packages and their tests).
vet:
	$(GO) vet $(CHECKFLAGS) $(PKGS)

# staticcheck, the go.mod tool, is built as usual (`go tool -n` builds it
# into the cache and names it); only its loading of the packages (go list,
# through GOFLAGS) uses CHECKFLAGS.
staticcheck:
	GOFLAGS="$$($(GO) env GOFLAGS) $(CHECKFLAGS)" "$$($(GO) tool -n staticcheck)" $(PKGS)

# The tests of ./scenarios that skip under the race detector (live timing,
# the long single-goroutine simulations): make test runs them in a second
# pass without it. TestMakefileNamesEveryRaceSkip (scenarios) fails when a
# name here no longer exists or a test that skips under -race is missing.
NORACE_TESTS := TestGameDayLibrary|TestGameDayLibrarySeeds|TestFeedMatchesScore|TestDifferential|TestFidelity|TestLiveBlackBox|TestLiveEndLetsRequestsFinish|TestFleetSharedBeatsLocal|TestLiveFleetRedis|TestLivePrometheusAlerts|TestLiveFlagshipPrometheusAlerts
# The longest of them (3m50s of real time, little CPU) runs beside the others.
NORACE_LONG := TestLiveFlagshipPrometheusAlerts

# make test: two lanes side by side (make -j). The checks lane runs the
# race tests with every go vet check (-vet=all: go test vets each package
# and its tests, so a separate go vet would only type-check everything and
# derive the dependencies' facts a second time), then staticcheck and the
# OTLP/gRPC build's tests side by side; all of it niced, because the live
# lane comes first: it builds the scenarios' non-race test binary (as the
# README test builds: -pgo=off, grpcnotrace, one compile for both) and
# plays the tests that skip under the race detector, the live game days
# among them, which mostly wait on real time (the flagship with the team's
# Prometheus alerts: 3m50s) and must not wait on the CPU. So their real
# time passes beside the race build's CPU instead of after it. From an
# empty cache the race tests compile every dependency once with the race
# detector (staticcheck then loads those), the live lane once without it.
# The race tests run three packages at a time (-p 3): the README test and
# the live bake-offs hold a package slot for minutes while mostly waiting.
test:
	@mkdir -p out/norace
	@$(MAKE) --no-print-directory -j checks live

checks:
	nice -n 10 $(GO) test $(CHECKFLAGS) -vet=all -p 3 -shuffle=on -timeout 14m $(PKGS)
	@nice -n 10 $(MAKE) --no-print-directory -j -O staticcheck otlpgrpc

live:
	@$(GO) test -c -pgo=off -tags grpcnotrace -o out/norace/scenarios.test ./scenarios
	@$(MAKE) --no-print-directory -j -O norace norace-long staticcheck-tool

# Builds the staticcheck tool into the build cache (the live lane does,
# niced, while its game days wait), so the checks lane finds it built.
staticcheck-tool:
	@nice -n 10 $(GO) tool -n staticcheck > /dev/null

# Without the race detector: every example game day, its scoring as the
# log is written, the sim-vs-live differential test, the live and fleet
# game days. Each top-level test's verdict is listed (none may skip in CI).
norace: NORACE_RUN = -test.run '^($(NORACE_TESTS))$$' -test.skip '^($(NORACE_LONG))$$'
norace-long: NORACE_RUN = -test.run '^($(NORACE_LONG))$$'
norace norace-long:
	@cd scenarios && ../out/norace/scenarios.test -test.v -test.shuffle=on -test.timeout 14m $(NORACE_RUN) > ../out/$@.log 2>&1 || { cat ../out/$@.log; exit 1; }
	@grep -E '^(--- |ok|PASS|FAIL)' out/$@.log
	@if [ -n "$$CI" ] && grep -E "^--- SKIP" out/$@.log; then echo "a test skipped in CI"; exit 1; fi

# The OTLP/gRPC exporter, in builds with -tags otlpgrpc only (with
# CHECKFLAGS: its dependencies are the race build's, already compiled).
otlpgrpc:
	$(GO) test $(CHECKFLAGS) -tags otlpgrpc -run 'OTLP|TestCheck|TestNewProvider' ./gateway/tracing ./gateway

# Benchmarks only (no tests), built as the binary is (PGO); compare runs
# with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -pgo=$(PGO) $(PKGS)

# Refresh the PGO profile: CPU profiles of the simulator's and the
# gateway's benchmarks (built without PGO), merged.
pgo:
	mkdir -p out/pgo
	$(GO) test -run '^$$' -bench 'SimHour|Sim$$|SimLean' -benchtime 3x -pgo=off -cpuprofile out/pgo/sim.prof -o out/pgo/sim.test ./scenarios
	$(GO) test -run '^$$' -bench 'Gateway|Streams' -benchtime 2s -pgo=off -cpuprofile out/pgo/gateway.prof -o out/pgo/gateway.test ./gateway/benchmarks
	$(GO) tool pprof -proto out/pgo/sim.prof out/pgo/gateway.prof > cmd/brownout/default.pgo

# A short, bounded run of every fuzz target (FUZZTIME each).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# A real game day end to end on the embedded defaults (simulated mode).
demo: build
	./bin/brownout gameday run $(SCENARIO) --mode sim --out out/demo

clean:
	rm -rf bin out
