package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// rootLong is the root command's help: what brownout is and its exit codes.
const rootLong = `brownout is an LLM failover gateway (serve), programmable mock providers
(mock) and a game-day runner (gameday) that scores how well a gateway copes.

Exit status (every command):
  0  success
  1  a failed verdict: a game day's expectations (or an aborted run),
     a failing eval case (evals run) or an unqualified fallback (evals
     qualify), report diff --fail-on-regression
  2  usage or input error: an unknown command or flag, an invalid file`

// examples are the Examples section of each command's help, by command path.
var helpExamples = map[string]string{
	"brownout": `  brownout gameday run examples/gamedays/primary-429-storm.yaml --out out/demo
  brownout serve -c examples/gateway/local.yaml
  brownout init starter && brownout gameday run starter/gameday.yaml`,
	"brownout version": `  brownout version
  brownout --version`,
	"brownout gameday": `  brownout gameday validate examples/gamedays/*.yaml
  brownout gameday run examples/gamedays/ttft-brownout.yaml --seed 7 --out out/ttft`,
	"brownout gameday run": `  # simulated (virtual time, deterministic per seed): well under a second
  brownout gameday run examples/gamedays/primary-429-storm.yaml --out out/demo
  # live (real HTTP on loopback, real time): the scenario's duration, here 40 s
  brownout gameday run examples/gamedays/quick-429-burst.yaml --mode live --out out/quick-live`,
	"brownout gameday validate": `  brownout gameday validate examples/gamedays/*.yaml`,
	"brownout serve": `  brownout serve -c examples/gateway/local.yaml --check
  brownout serve -c examples/gateway/local.yaml --listen 127.0.0.1:8081`,
	"brownout mock": `  brownout mock -c examples/providers/three-providers.yaml
  brownout mock --proxy-to https://api.openai.com --format openai --listen 127.0.0.1:9200`,
	"brownout evals": `  brownout evals run examples/evals/support.yaml --target openai/gpt-4o --url http://127.0.0.1:9101/v1`,
	"brownout evals run": `  brownout evals run examples/evals/support.yaml --target openai/gpt-4o --url http://127.0.0.1:9101/v1
  brownout evals run examples/evals/support.yaml --target openai/gpt-4o --url http://127.0.0.1:8080 --gateway`,
	"brownout evals qualify": `  brownout evals qualify --suite examples/evals/support.yaml --primary openai/gpt-4o \
      --fallback anthropic/claude-sonnet-4-5 --endpoint openai=http://127.0.0.1:9101/v1 \
      --endpoint anthropic=anthropic@http://127.0.0.1:9102 --threshold 95% --out qualification.json`,
	"brownout report": `  brownout report render out/demo/result.json --out out/demo-again
  brownout report trend out/`,
	"brownout report render": `  brownout report render out/demo/result.json --out out/demo-again`,
	"brownout report diff":   `  brownout report diff last-quarter/result.json out/demo/result.json --fail-on-regression`,
	"brownout report trend":  `  brownout report trend out/`,
	"brownout usage":         `  brownout usage report --file out/usage.jsonl --by target`,
	"brownout schema":        `  brownout schema gateway > gateway.schema.json`,
	"brownout init": `  brownout init starter
  brownout gameday run starter/gameday.yaml`,
}

// finishTree gives every command of the tree its Examples section and makes
// every group command refuse an unknown subcommand (exit 2, with the
// closest names), as cobra does only for the root.
func finishTree(c *cobra.Command) {
	if c.Example == "" {
		c.Example = helpExamples[c.CommandPath()]
	}
	if c.HasSubCommands() && c.HasParent() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageError(unknownCommand(cmd, args[0]))
		}
	}
	for _, sub := range c.Commands() {
		finishTree(sub)
	}
}

func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return errors.New(msg + "; commands: " + strings.Join(names, ", "))
}

// checkOutDir makes sure dir exists and is writable before a run whose
// results go there, so a bad --out fails at once rather than after the run.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	f, err := os.CreateTemp(dir, ".brownout-check-*")
	if err != nil {
		return fmt.Errorf("--out: %s is not writable: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(filepath.Clean(name))
}
