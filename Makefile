GO ?= go
PKGS := ./...
FUZZTIME ?= 10s
BENCHTIME ?= 1s
SCENARIO ?= examples/gamedays/primary-429-storm.yaml
# The profile `go build` optimizes the brownout binary with (profile-guided
# optimization); `make bench` builds with it too, PGO=off to compare.
PGO ?= $(CURDIR)/cmd/brownout/default.pgo

.PHONY: build install test race race-nice vet staticcheck vet-nice staticcheck-nice otlpgrpc otlpgrpc-nice norace norace-long bench pgo fuzz demo clean

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
#
# The official SDKs (openai-go, anthropic-sdk-go, genai) are test-only
# dependencies, the compatibility tests' clients: compiled without inlining
# (-l), the largest of them cost half the CPU (openai-go/v3/...: 140 s
# user+sys with the race detector, 82 s with -l; measured 2026-12-02). The
# flags have no spaces, as GOFLAGS (staticcheck, below) needs.
SDKFLAGS := -gcflags=github.com/openai/openai-go/v3/...=-l -gcflags=github.com/anthropics/anthropic-sdk-go/v2/...=-l -gcflags=google.golang.org/genai/...=-l
CHECKFLAGS := -race -pgo=off $(SDKFLAGS)

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
# The longest of them (3m50s of real time, little CPU) runs beside the race
# tests.
NORACE_LONG := TestLiveFlagshipPrometheusAlerts

# make test, on a 2-core machine from an empty build cache (the times are
# in the README):
#  1. the scenarios' non-race test binary, as the README test builds
#     (-pgo=off, grpcnotrace): its dependencies compiled once without the
#     race detector, for both of its runs and the README test's builds;
#  2. the race tests (niced) beside the longest non-race test, the live
#     flagship game day (3m50s of real time, little CPU: its timing comes
#     first), which would otherwise end the run alone;
#  3. side by side (make -j), the checks that need no race build of the
#     tests (vet and staticcheck, niced, load the race tests' build) and the
#     rest of the non-race pass, whose live game days mostly wait on real
#     time.
# The race tests run without go test's own vet (-vet=off): `make vet` runs
# every analyzer over the same packages and their tests, and go test's
# subset computed its facts over every dependency a second time.
test:
	@mkdir -p out/norace
	$(GO) test -c -pgo=off -tags grpcnotrace -o out/norace/scenarios.test ./scenarios
	@$(MAKE) --no-print-directory -j -O race-nice norace-long
	@$(MAKE) --no-print-directory -j -O vet-nice staticcheck-nice otlpgrpc-nice norace

# The race tests. -p 4 (the go command's default is one per core): go test
# counts a running test binary as one of its -p programs, and the longest
# (the README test, the naive proxies' bake-offs) mostly wait on live game
# days; with two slots on a 2-core machine they held both and the compiles
# behind them waited, the CPU a quarter busy for minutes.
race:
	$(GO) test $(CHECKFLAGS) -vet=off -p 4 -shuffle=on -timeout 14m $(PKGS)

race-nice vet-nice staticcheck-nice otlpgrpc-nice:
	nice -n 10 $(MAKE) --no-print-directory $(@:-nice=)

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
# The tag changes only gateway/tracing's exporter; the gateway's spans end
# to end are tested over OTLP/HTTP in the race pass.
otlpgrpc:
	$(GO) test $(CHECKFLAGS) -tags otlpgrpc ./gateway/tracing

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
